// The committed exported headers (tests/export/data, written by tools/gpubudget-export) compile at
// the default constexpr limits and describe what PyTorch has: sum(p.numel()) parameters, and for
// ResNet-18 the zoo's own description's budget to the byte. Needs no PyTorch.
#include "data/bev_unfold_net.hpp"
#include "data/frame_transformer.hpp"
#include "data/resnet18.hpp"

#include <gpubudget/models/torchvision.hpp>

namespace {
using namespace gpubudget;

constexpr training plan{.batch = 8, .precision = amp_fp16, .optimizer = adamw};
constexpr auto exported_resnet18 = budget_totals(exported::resnet18, plan, devices::t4);
constexpr auto zoo_resnet18 = budget_totals(models::resnet18(), plan, devices::t4);
static_assert(exported_resnet18.parameter_count == exported::resnet18_parameters);
static_assert(exported_resnet18.parameter_count == zoo_resnet18.parameter_count);
static_assert(exported_resnet18.saved_activations == zoo_resnet18.saved_activations);
static_assert(exported_resnet18.step_peak == zoo_resnet18.step_peak);
static_assert(exported_resnet18.total() == zoo_resnet18.total());

constexpr auto bev = budget_totals(exported::bev_unfold_net, training{.batch = 2}, devices::t4);
static_assert(bev.parameter_count == exported::bev_unfold_net_parameters);
static_assert(bev.saved_activations > 0 && require_fits<bev>);

// nn.MultiheadAttention blocks (attention(..., torch_mha)): the count is sum(p.numel()) too
constexpr auto frames = budget_totals(exported::frame_transformer, training{.batch = 2}, devices::t4);
static_assert(frames.parameter_count == exported::frame_transformer_parameters);
}  // namespace

int main() { return 0; }
