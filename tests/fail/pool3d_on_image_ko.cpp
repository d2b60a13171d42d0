// expect: tensor_rank_unsupported
// max_pool3d on a [C, H, W] image: nn.MaxPool3d takes [N, C, D, H, W]; a 3-D pool must not pool an
// image as if it were a volume. Twin: tests/static/layer_facts.cpp (vol).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(4, 8, 8), max_pool3d(2));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
