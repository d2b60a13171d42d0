// expect: tensor_rank_unsupported
// trilinear upsampling of a [C, H, W] image: PyTorch's trilinear mode takes [N, C, D, H, W] (and
// bilinear [N, C, H, W]); the budget must not upsample an image as a volume. Twin:
// tests/static/layer_facts.cpp (up3).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(4, 8, 8), upsample(2, 2, upsample_mode::trilinear));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
