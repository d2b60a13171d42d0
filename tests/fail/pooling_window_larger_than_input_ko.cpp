// expect: pooling_window_larger_than_padded_input
// MaxPool2d(3, stride 2) on a 2x2 map: (2 - 3) / 2 + 1 truncates to 1, a silently wrong 1x1 output before.
// Twin: tests/static/hardening_ok.cpp (pooling_window_larger_than_input).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 2, 2), max_pool2d(3, stride(2)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
