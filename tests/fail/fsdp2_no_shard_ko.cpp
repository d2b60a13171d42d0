// expect: fsdp2_has_no_no_shard
// fully_shard (FSDP2) has no NO_SHARD strategy: replication is DDP's job.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>

using namespace gpubudget;

constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto r = per_rank_budget(models::gpt(models::gpt2_small(128)), per_gpu, fsdp2(fsdp_strategy::no_shard, 8), devices::a100_40gb);

int main() { return r.total() > 0 ? 0 : 1; }
