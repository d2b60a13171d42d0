// expect: expert_parallel_does_not_divide_data_parallel_size
// Expert groups are carved out of the data-parallel ranks: 8 GPUs with tp 2 leave 4, which ep 8
// cannot split (twin: tests/static/distributed_facts.cpp, tiny_moe).
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto net = models::mixtral(models::llama_config{1000, 64, 2, 4, 4, 128, 128, 32, false, 0}, models::moe_config{8, 2, 100});
constexpr auto r = per_rank_budget(net, per_gpu, parallel_layout{.world_size = 8, .tensor_parallel = 2, .expert_parallel = 8}, devices::a100_40gb);

int main() { return r.total() > 0 ? 0 : 1; }
