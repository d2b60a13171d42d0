// expect: offload_needs_zero_or_fsdp
// Plain data parallelism (DDP) has no CPU offload: asking for it is a named compile-time error.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>

using namespace gpubudget;

constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto r = per_rank_budget(models::gpt(models::gpt2_small(128)), per_gpu,
                                   parallel_layout{.world_size = 8, .offload = {true, false}}, devices::a100_40gb);

int main() { return r.total() > 0 ? 0 : 1; }
