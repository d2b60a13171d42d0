// Per-rank budgets at compile time (distributed.hpp): DeepSpeed's published ZeRO model-state
// figures, frozen parameters, the fit check, and the solvers on Llama-2-7B.
// Twin of tests/fail/rank_exceeds_a100_zero1_ko.cpp.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>
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
static_assert(states(zero_est(2, 8)) == deepspeed_zero2_gpu_bytes_before_5099(2'851'000'000, 8, false));
static_assert(states(zero_est(2, 8, opt)) == deepspeed_zero2_gpu_bytes_before_5099(2'851'000'000, 8, true));
// DeepSpeed's estimator since PR #5099 partitions the 16-bit gradients, as the engine (and gpubudget) do.
static_assert(states(zero(2, 8)) == deepspeed_zero2_gpu_bytes(2'851'000'000, 8, false));
static_assert(states(zero(2, 8, opt)) == deepspeed_zero2_gpu_bytes(2'851'000'000, 8, true));
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

// --- Expert parallelism (twins of tests/fail/expert_parallel_*_ko.cpp): a tiny Mixtral, 4 experts
// of 3 x 64 x 128 weights in each of 2 layers; ep 2 of 4 data-parallel ranks keeps 2 per layer ---
namespace tiny_moe {
constexpr auto net = models::mixtral(models::llama_config{1000, 64, 2, 4, 4, 128, 128, 32, false, 0}, models::moe_config{4, 2, 100});
constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto f = rank_facts(net, per_gpu, devices::a100_40gb);
static_assert(f.experts.experts == 4);
static_assert(f.experts.params == 2 * 4 * 3 * 64 * 128);
static_assert(per_rank(f, parallel_layout{.world_size = 4, .expert_parallel = 2}).params.total == f.params.total - f.experts.params / 2);
static_assert(per_rank(f, parallel_layout{.world_size = 4, .expert_parallel = 4}).params.total == f.params.total - 3 * f.experts.params / 4);
// FSDP2 holds two more units than FSDP1: its flat all-gather output and reduce-scatter input.
static_assert(per_rank(f, fsdp2(fsdp_strategy::full_shard, 4)).gathered_parameters ==
              per_rank(f, fsdp(fsdp_strategy::full_shard, 4)).gathered_parameters * 5 / 3);
}  // namespace tiny_moe

// --- The worst pipeline stage (twin of tests/fail/rank_exceeds_last_stage_ko.cpp): GPT-2 small,
// checkpointed blocks, 4 x 1024 tokens, 4 stages; the last stage holds the loss over the logits --
namespace last_stage {
constexpr training per_gpu{.batch = 4, .precision = pure_bf16, .optimizer = adamw, .checkpoint_blocks = true};
constexpr auto r = per_rank_budget(models::gpt(models::gpt2_small(1024)), per_gpu, parallel_layout{.world_size = 4, .pipeline_parallel = 4},
                                   custom_device("4 GB", 4 * GB));
static_assert(r.pipeline_stage == 3);
static_assert(require_fits_per_rank<r>);
}  // namespace last_stage

// --- Megatron-LM's theoretical_memory_usage.py, compute_weight_and_optimizer_memory ----------------
// (megatron/training/theoretical_memory_usage.py at NVIDIA/Megatron-LM d98e8a64: most loaded shard
// = (transformer layers / pp + embedding) / tp parameters + the norms / pp, replicated over tp;
// 18 bytes each, or 6 + 12/dp with the distributed optimizer). Parameter counts are that script's
// own formula for each configuration (bf16, Adam), reproduced by megatron_weight_and_optimizer_bytes.
namespace megatron_check {
constexpr step_facts lm(std::int64_t total, std::int64_t embedding, std::int64_t output, std::int64_t norms) {
  step_facts f{};
  f.single.plan = training{.batch = 1, .precision = pure_bf16, .optimizer = adam};
  f.params = {total, total, embedding, 0};
  f.stages.first_params = f.stages.first_trainable = embedding;
  f.stages.last_params = f.stages.last_trainable = output;
  f.stages.norm_params = f.stages.norm_trainable = norms;
  return f;
}
constexpr bool equal(std::int64_t bytes, double megatron) { return static_cast<double>(bytes) == megatron; }
// GPT-3 175B (h 12288, 96 layers, 96 heads, padded vocabulary 51200, tied, LayerNorm), TP 8 × PP 8
// × DP 16, sequence parallel, distributed optimizer: 2,797,145,088 parameters on stage 0 × 6.75 B.
constexpr megatron_args gpt3{.seq_length = 2048, .hidden_size = 12288, .ffn_hidden_size = 4 * 12288, .num_layers = 96, .num_attention_heads = 96,
                             .padded_vocab_size = 51200, .tensor_model_parallel_size = 8, .pipeline_model_parallel_size = 8, .data_parallel_size = 16,
                             .sequence_parallel = true, .selective_recompute = true, .use_distributed_optimizer = true};
constexpr auto gpt3_facts = lm(174'580'064'256, 629'145'600, 0, 96 * 2 * 2 * 12288 + 2 * 12288);
static_assert(per_rank_at_stage(gpt3_facts, megatron(1024, 8, 8, true, true), 0).params.total == 2'797'145'088);
static_assert(equal(per_rank_at_stage(gpt3_facts, megatron(1024, 8, 8, true, true), 0).model_states(), megatron_weight_and_optimizer_bytes(gpt3)));
static_assert(per_rank(gpt3_facts, megatron(1024, 8, 8, true, true)).model_states() == 18'880'729'344);
// Llama-2-70B (h 8192, 80 layers, 8 query groups, SwiGLU 28672, vocabulary 32000, untied, RMSNorm),
// TP 8 × DP 8, no distributed optimizer: 8,623,235,072 parameters per rank × 18 B.
constexpr megatron_args llama70{.seq_length = 4096, .hidden_size = 8192, .ffn_hidden_size = 28672, .num_layers = 80, .num_attention_heads = 64,
                                .num_query_groups = 8, .padded_vocab_size = 32000, .swiglu = true, .untie_embeddings_and_output_weights = true,
                                .rms_norm = true, .tensor_model_parallel_size = 8, .data_parallel_size = 8};
constexpr auto llama70_facts = lm(68'976'648'192, 262'144'000, 262'144'000, 80 * 2 * 8192 + 8192);
static_assert(equal(per_rank(llama70_facts, megatron(64, 8, 1, true, false)).model_states(), megatron_weight_and_optimizer_bytes(llama70)));
static_assert(per_rank(llama70_facts, megatron(64, 8, 1, true, false)).model_states() == 18 * 8'623'235'072LL);
// A 22B GPT (h 6144, 48 layers, 64 heads; Korthikanti et al.'s 22B), TP 8 × DP 4, distributed
// optimizer: 2,758,422,528 parameters per rank × 9 B.
constexpr megatron_args gpt22{.hidden_size = 6144, .ffn_hidden_size = 4 * 6144, .num_layers = 48, .num_attention_heads = 64, .padded_vocab_size = 51200,
                              .tensor_model_parallel_size = 8, .data_parallel_size = 4, .use_distributed_optimizer = true};
constexpr auto gpt22_facts = lm(22'059'036'672, 314'572'800, 0, 48 * 2 * 2 * 6144 + 2 * 6144);
static_assert(equal(per_rank(gpt22_facts, megatron(32, 8, 1, true, true)).model_states(), megatron_weight_and_optimizer_bytes(gpt22)));
static_assert(per_rank(gpt22_facts, megatron(32, 8, 1, true, true)).model_states() == 9 * 2'758'422'528LL);
}  // namespace megatron_check
}  // namespace
