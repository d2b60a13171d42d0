// expect: pixel_shuffle_factor_must_divide_channels
// nn.PixelShuffle(2) on 10 channels: 10 is not a multiple of 2² (PyTorch: "pixel_shuffle expects
// its input's 'channel' dimension to be divisible by the square of upscale_factor").
// Twin: tests/static/attention_unfold_facts.cpp (pixel_shuffle(2) on 12 channels).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 16, 16), conv2d(10, 3, padding(1)), pixel_shuffle(2));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
