// expect: unfold_kernel_larger_than_padded_input
// nn.Unfold(5) on a 3x3 map.
// Twin: tests/static/hardening_ok.cpp (unfold_kernel_larger_than_input).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(4, 3, 3), unfold(5));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
