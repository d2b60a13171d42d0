// expect: rank_exceeds_gpu_memory<.*pipeline_stage<0, 1>.*any_data_rank_of_sharded_over<8, 8>.*needs_mib<[0-9]+>.*has_mib<40335>
// Llama-2-7B, full fine-tune, pure bf16 + AdamW, 1 sequence of 2048 tokens per GPU, DeepSpeed
// ZeRO-1 on 8 × A100 40GB: the 16-bit parameters and gradients are not sharded (2 + 2 bytes ×
// 6.74 B = 25.1 GiB) and the optimizer partition adds 16 B × 6.74 B / 8 = 12.6 GiB; with the
// activations the rank needs ~59 GiB. The diagnostic names the rank role and the MiB.
// Twin: tests/static/distributed_facts.cpp (ZeRO-3 on the same GPUs fits).
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto r = per_rank_budget(models::llama(models::llama2_7b(2048)), per_gpu, zero(1, 8), devices::a100_40gb);

static_assert(require_fits_per_rank<r>);

int main() {}
