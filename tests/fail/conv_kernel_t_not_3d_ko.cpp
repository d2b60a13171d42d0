// expect: invalid_layer_argument
// kernel_t on a 2-D convolution: a temporal dimension of its own is a 3-D convolution's (video
// ResNets' (3, 7, 7) stems); on conv2d it would silently mean nothing. Twin: tests/static/layer_facts.cpp (clip).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 16, 16), conv2d(8, 3, padding(1), kernel_t(3)));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
