// expect: repeat_count_must_be_positive
// repeat(0, ...): a block repeated no times.
// Twin: tests/static/hardening_ok.cpp (repeat_count_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), repeat(0, linear(64), relu()));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
