// expect: second_input_inside_model
// an input(...) after the model's first layers.
// Twin: tests/static/hardening_ok.cpp (second_input).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), linear(64), input(64), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
