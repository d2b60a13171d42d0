// expect: permute_repeats_an_axis
// permute(1, 1, 0) names axis 1 twice.
// Twin: tests/static/hardening_ok.cpp (permute_repeated_axis).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 8, 8), permute(1, 1, 0), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
