// expect: tensor_rank_unsupported
// max_pool1d on a [C, H, W] map: nn.MaxPool1d takes [N, C, L]; a 1-D pool must not silently pool
// an image (nor a 2-D pool a sequence). Twin: tests/static/hardening_ok.cpp (pool1d_on_sequence).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(4, 8, 8), max_pool1d(2));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
