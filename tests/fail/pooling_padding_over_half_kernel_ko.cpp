// expect: pooling_padding_over_half_the_kernel
// MaxPool2d(3, stride=2, padding=2): PyTorch raises "pad should be at most half of effective kernel
// size"; before, the budget gave a number for a layer that cannot run.
// Twin: tests/static/hardening_ok.cpp (pooling_padding_over_half_kernel).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 32, 32), max_pool2d(3, stride(2), padding(2)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
