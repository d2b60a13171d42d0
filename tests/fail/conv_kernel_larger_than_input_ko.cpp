// expect: conv_kernel_larger_than_padded_input
// A 7x7 convolution on a 4x4 map (no padding): PyTorch raises "Kernel size can't be greater than actual input size".
// Twin: tests/static/hardening_ok.cpp (conv_kernel_larger_than_input).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 4, 4), conv2d(8, 7));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
