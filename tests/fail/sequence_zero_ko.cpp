// expect: sequence_length_must_be_positive
// a sequence of 0 tokens.
// Twin: tests/static/hardening_ok.cpp (sequence_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(tokens(0), embedding(100, 64), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
