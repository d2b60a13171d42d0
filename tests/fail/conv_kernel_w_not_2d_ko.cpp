// expect: invalid_layer_argument
// kernel_w on a 1-D convolution: a last dimension of its own is a 2-D convolution's (Inception's
// 1×7); on conv1d the kernel is one size already. Twin: tests/static/layer_facts.cpp (rect).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 64), conv1d(8, 3, padding(1), kernel_w(5), padding_w(2)));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
