// expect: rank_exceeds_gpu_memory<.*pipeline_stage<3, 4>.*needs_mib<[0-9]+>.*has_mib<2861>
// GPT-2 small, checkpointed blocks, 4 x 1024 tokens per micro-batch over 4 pipeline stages on
// 3 GB cards: the last stage, which holds the loss over 50257 logits per token, does not fit, and
// the diagnostic names it (twin: tests/static/distributed_facts.cpp, last_stage).
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>

using namespace gpubudget;

constexpr training per_gpu{.batch = 4, .precision = pure_bf16, .optimizer = adamw, .checkpoint_blocks = true};
constexpr auto r = per_rank_budget(models::gpt(models::gpt2_small(1024)), per_gpu, parallel_layout{.world_size = 4, .pipeline_parallel = 4},
                                   custom_device("3 GB", 3 * GB));
static_assert(require_fits_per_rank<r>);

int main() { return 0; }
