// expect: tensor_parallel_does_not_divide_heads
// GPT-2 small has 12 attention heads: tensor parallelism over 8 GPUs cannot split them.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>

using namespace gpubudget;

constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto r = per_rank_budget(models::gpt(models::gpt2_small(128)), per_gpu,
                                   parallel_layout{.world_size = 8, .tensor_parallel = 8}, devices::a100_40gb);

int main() { return r.total() > 0 ? 0 : 1; }
