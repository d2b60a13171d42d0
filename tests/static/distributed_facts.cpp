// Per-rank budgets at compile time (distributed.hpp): DeepSpeed's published ZeRO model-state
// figures, frozen parameters, the fit check, and the solvers on Llama-2-7B.
// Twin of tests/fail/rank_exceeds_a100_zero1_ko.cpp.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/transformers.hpp>

namespace {
using namespace gpubudget;

// --- DeepSpeed's T5-3B example (DeepSpeed docs, "Memory Requirements", docs/code-docs/source/memory.rst:
// "Model with 2851M total params, 32M largest layer params", 1 node × 8 GPUs, fp16, Adam) ----------
constexpr step_facts t5_3b(std::int64_t trainable = 2'851'000'000) {
  step_facts f{};
  f.single.plan = training{.batch = 1, .precision = pure_fp16, .optimizer = adam};
  f.params = {2'851'000'000, trainable, 32'000'000, 32'000'000};
  return f;
}
constexpr std::int64_t states(const parallel_layout& l, std::int64_t trainable = 2'851'000'000) {
  return per_rank(t5_3b(trainable), l).model_states();
}
constexpr offload_policy opt{true, false}, both{true, true};
/// ZeRO as DeepSpeed's estimators count it (ZeRO-2 with whole 16-bit gradients).
constexpr parallel_layout zero_est(std::int64_t stage, std::int64_t gpus, offload_policy o = {}) {
  auto l = zero(stage, gpus, o);
  l.deepspeed.estimator_accounting = true;
  return l;
}
// Exactly DeepSpeed's estimator formulas ...
static_assert(states(zero_est(2, 8)) == deepspeed_zero2_gpu_bytes(2'851'000'000, 8, false));
static_assert(states(zero_est(2, 8, opt)) == deepspeed_zero2_gpu_bytes(2'851'000'000, 8, true));
static_assert(states(zero(3, 8)) == deepspeed_zero3_gpu_bytes(2'851'000'000, 32'000'000, 8, false, false));
static_assert(states(zero(3, 8, opt)) == deepspeed_zero3_gpu_bytes(2'851'000'000, 32'000'000, 8, true, false));
static_assert(states(zero(3, 8, both)) == deepspeed_zero3_gpu_bytes(2'851'000'000, 32'000'000, 8, true, true));
// ... and the GiB the docs print: 15.93, 5.31 (ZeRO-2); 6.09, 0.78, 0.12 (ZeRO-3), to 0.01 GiB.
constexpr std::int64_t centi_gib(std::int64_t bytes) { return (bytes * 100 + GiB / 2) / GiB; }
static_assert(centi_gib(states(zero_est(2, 8))) == 1593);
static_assert(centi_gib(states(zero_est(2, 8, opt))) == 531);
static_assert(centi_gib(states(zero(3, 8))) == 609);
static_assert(centi_gib(states(zero(3, 8, opt))) == 78);
static_assert(centi_gib(states(zero(3, 8, both))) == 12);
// ZeRO-1 keeps what the ZeRO-2 estimator counts (both live in stage_1_and_2.py); the ZeRO-2 engine
// partitions its 16-bit gradients (2 bytes × P × 7/8 less); stage 0 shards nothing.
static_assert(states(zero(1, 8)) == states(zero_est(2, 8)));
static_assert(states(zero(1, 8)) - states(zero(2, 8)) == 2 * 2'851'000'000LL - 2 * 2'851'000'000LL / 8);
static_assert(states(zero(2, 8, opt)) == states(zero_est(2, 8, opt)));
static_assert(states(zero(0, 8)) == 20 * 2'851'000'000LL);

// --- Frozen parameters: 16-bit weights only, no gradients, no optimizer state ----------------------
static_assert(states(zero(2, 8), 0) == 2 * 2'851'000'000LL);
static_assert(states(zero(3, 8), 0) == 4 * 32'000'000LL + 2 * 2'851'000'000LL / 8);
static_assert(states(fsdp(fsdp_strategy::full_shard, 8), 0) < states(fsdp(fsdp_strategy::full_shard, 8)) / 3);

// --- FSDP strategies: FULL_SHARD < SHARD_GRAD_OP < NO_SHARD; HYBRID_SHARD(8) on 16 = FULL_SHARD on 8 --
static_assert(states(fsdp(fsdp_strategy::full_shard, 8)) < states(fsdp(fsdp_strategy::shard_grad_op, 8)));
static_assert(states(fsdp(fsdp_strategy::shard_grad_op, 8)) < states(fsdp(fsdp_strategy::no_shard, 8)));
static_assert(states(fsdp(fsdp_strategy::hybrid_shard, 16, {}, 8)) == states(fsdp(fsdp_strategy::full_shard, 8)));
// FULL_SHARD: 16 bytes per parameter over 8 ranks + three 16-bit units (current, prefetched, gradients).
static_assert(states(fsdp(fsdp_strategy::full_shard, 8)) == 16 * 2'851'000'000LL / 8 + 3 * 2 * 32'000'000LL);

// --- Llama-2-7B full fine-tune, pure bf16 + AdamW, 2048 tokens per GPU, on A100 40GB ---------------
constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto llama7 = models::llama(models::llama2_7b(2048));
constexpr auto r3 = per_rank_budget(llama7, per_gpu, zero(3, 8), devices::a100_40gb);
static_assert(require_fits_per_rank<r3>);
static_assert(r3.params.total == 6'738'415'616);
static_assert(r3.params.largest_unit == 202'383'360);  // one decoder layer: FSDP's unit

// --- Megatron-LM's theoretical_memory_usage.py, compute_weight_and_optimizer_memory ----------------
// (megatron/training/theoretical_memory_usage.py: most loaded shard = (transformer layers / pp +
// embedding) / tp parameters; 18 bytes each, or 6 + 12/dp with the distributed optimizer).
// Parameter counts are Megatron's own formula for each configuration (bf16, Adam); the figures
// are that script's, in bytes (its MB = 2^20 B in comments).
namespace megatron_check {
constexpr step_facts lm(std::int64_t total, std::int64_t embedding) {
  step_facts f{};
  f.single.plan = training{.batch = 1, .precision = pure_bf16, .optimizer = adam};
  f.params = {total, total, embedding, 0};
  return f;
}
// GPT-3 175B (h 12288, 96 layers, 96 heads, padded vocabulary 51200, tied), TP 8 × PP 8 × DP 16,
// sequence parallel, distributed optimizer: 2,796,626,304 parameters on stage 0, 18,002.73 MB.
static_assert(per_rank(lm(174'580'064'256, 629'145'600), megatron(1024, 8, 8, true, true)).model_states() == 18'877'227'552);
// Llama-2-70B (h 8192, 80 layers, 8 query groups, SwiGLU 28672, vocabulary 32000, untied, RMSNorm),
// TP 8 × DP 8, no distributed optimizer: 8,622,081,024 parameters per rank × 18 B, 148,007.83 MB.
static_assert(per_rank(lm(68'976'648'192, 262'144'000), megatron(64, 8, 1, true, false)).model_states() == 155'197'458'432);
// A 22B GPT (h 6144, 48 layers, 64 heads; Korthikanti et al.'s 22B), TP 8 × DP 4, distributed
// optimizer: 2,757,379,584 parameters per rank, 23,666.78 MB.
static_assert(per_rank(lm(22'059'036'672, 314'572'800), megatron(32, 8, 1, true, true)).model_states() == 24'816'416'256);
}  // namespace megatron_check
}  // namespace
