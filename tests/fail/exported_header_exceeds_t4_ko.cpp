// expect: model_exceeds_gpu_memory<[1-9][0-9][0-9][0-9][0-9], 15093,
// The committed exported header of a custom nn.Module (tests/export/data/bev_unfold_net.hpp,
// written by tools/gpubudget-export, not in the zoo) at batch 16384 fp32 on a T4 (14.74 GiB =
// 15093 MiB) must fail require_fits with a five-digit needed MiB. Its twin passes in
// tests/export/exported_facts.cpp (batch 2).
#include "../export/data/bev_unfold_net.hpp"

namespace {
using namespace gpubudget;
constexpr auto b = budget_totals(exported::bev_unfold_net, training{.batch = 16384}, devices::t4);
static_assert(require_fits<b>);
}  // namespace
