// expect: model_exceeds_gpu_memory<[1-9][0-9][0-9][0-9][0-9], 16158,
// ResNet-18 at 224×224, fp32, SGD with momentum, batch 1024 on a V100 16GB (15.78 GiB =
// 16158 MiB): the totals-only budget (`budget_totals`, a plain memory_budget) must fail
// `require_fits` with a five-digit needed MiB and the V100's 16158 in the diagnostic.
// Twin: tests/static/exceeds_v100_cnn_ok.cpp (batch 256 fits).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto basic(std::int64_t c) {
  return sequential(residual(conv2d(c, 3, padding(1), no_bias), batch_norm(), relu(),
                             conv2d(c, 3, padding(1), no_bias), batch_norm()),
                    relu());
}
constexpr auto down(std::int64_t c) {
  return sequential(parallel(merge_kind::add,
                             sequential(conv2d(c, 3, stride(2), padding(1), no_bias), batch_norm(), relu(),
                                        conv2d(c, 3, padding(1), no_bias), batch_norm()),
                             sequential(conv2d(c, 1, stride(2), no_bias), batch_norm())),
                    relu());
}
constexpr auto resnet18 = sequential(
    input(3, 224, 224), conv2d(64, 7, stride(2), padding(3), no_bias), batch_norm(), relu(),
    max_pool2d(3, stride(2), padding(1)), basic(64), basic(64), down(128), basic(128), down(256), basic(256),
    down(512), basic(512), adaptive_avg_pool2d(1, 1), flatten(), linear(1000));

constexpr auto b = budget_totals(resnet18, training{.batch = 1024, .optimizer = sgd_momentum}, devices::v100_16gb);

static_assert(require_fits<b>);

int main() {}
