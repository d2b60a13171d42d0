// Twin of tests/fail/exceeds_v100_cnn_ko.cpp: ResNet-18 with batch 256 fits a V100 16GB.
#include <gpubudget/gpubudget.hpp>

namespace {
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

constexpr auto b = budget_totals(resnet18, training{.batch = 256, .optimizer = sgd_momentum}, devices::v100_16gb);

static_assert(require_fits<b>);
static_assert(fits(b));
static_assert(fit_summary(b).available_mib == 16158);
}  // namespace
