// expect: dropout_percent_out_of_range
// dropout(150): a probability of 1.5.
// Twin: tests/static/hardening_ok.cpp (dropout_percent_high).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), dropout(150), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
