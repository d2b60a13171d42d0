// expect: conv_transpose_output_padding_not_below_stride_or_dilation
// ConvTranspose2d(16, 3, stride=1, output_padding=1): PyTorch raises "output padding must be smaller
// than either stride or dilation"; before, the output silently grew by one row and column.
// Twin: tests/static/hardening_ok.cpp (conv_transpose_output_padding).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 16, 16), conv_transpose2d(16, 3, stride(1), output_padding(1)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
