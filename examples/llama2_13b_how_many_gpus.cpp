// Llama-2-13B full fine-tune, bf16 + fp32 master, AdamW, one 4096-token sequence per GPU: how
// many A100-80GB with ZeRO-3, with FSDP FULL_SHARD (FSDP1 and FSDP2), with TP 2 × DP 4, with a
// pipeline — and what offload buys.
// One GPU alone would need ~320 GiB; the answers below hold at compile time.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/transformers.hpp>

#include <iostream>
#include <string>

using namespace gpubudget;

constexpr auto net = models::llama(models::llama2_13b(4096));
constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto facts = rank_facts(net, per_gpu, devices::a100_80gb);

// The smallest world sizes: 7 with ZeRO-3, which keeps DeepSpeed's default 5e8-element reduce
// bucket and prefetch window; 6 with FSDP, which does not, now that the attention on CUDA runs
// SDPA's cuDNN kernel with its output laid out like q (no copy before o_proj: op_rules.md CT2-CT4,
// 1.6 GiB less per rank than the flash kernel's copy this example assumed before).
static_assert(min_gpus(facts, zero(3, 1)) == 7);
static_assert(min_gpus(facts, fsdp(fsdp_strategy::full_shard, 1)) == 6);
// Offloading the optimizer state to the host: a single GPU is enough (ZeRO-Offload).
static_assert(min_gpus(facts, zero(3, 1, {true, false})) == 1);

// TP 2 × DP 4 with sequence parallelism halves the activations: it fits with ZeRO-1 (unsharded
// 16-bit weights and gradients) and with FSDP FULL_SHARD over the 4 data-parallel ranks.
constexpr parallel_layout tp2_zero1{.world_size = 8, .engine = sharding::zero, .zero_stage = 1, .tensor_parallel = 2, .sequence_parallel = true};
constexpr parallel_layout tp2_fsdp{.world_size = 8, .engine = sharding::fsdp, .fsdp = fsdp_strategy::full_shard, .tensor_parallel = 2, .sequence_parallel = true};
static_assert(fits_per_rank(per_rank(facts, tp2_zero1)));
constexpr auto tp2_fsdp_rank = per_rank(facts, tp2_fsdp);
static_assert(require_fits_per_rank<tp2_fsdp_rank>);
// How many GPUs at TP 2 (world sizes step by 2): TP 2 × DP 2 with FULL_SHARD over the 2.
static_assert(min_gpus(facts, tp2_fsdp) == 4);

// FSDP2 (fully_shard) gathers into a flat buffer and copies out, and copies gradients into a flat
// reduce-scatter buffer: two more 16-bit decoder layers than FSDP1's flat parameters; at 7 GPUs
// they still fit.
static_assert(min_gpus(facts, fsdp2(fsdp_strategy::full_shard, 1)) == 7);

// A pipeline instead: TP 2 × PP 2 × DP 2 with ZeRO-1. Stage 0 holds 2 micro-batches of its 20
// layers and the embedding; stage 1 one micro-batch, the output layer and the loss.
constexpr parallel_layout tp2_pp2{.world_size = 8, .engine = sharding::zero, .zero_stage = 1, .tensor_parallel = 2, .pipeline_parallel = 2,
                                  .sequence_parallel = true};
static_assert(per_rank(facts, tp2_pp2).pipeline_stage == 0);

std::string name(const parallel_layout& l) {
  static const char* fsdp_names[] = {"FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "NO_SHARD"};
  std::string s = l.engine == sharding::fsdp ? std::string("FSDP ") + fsdp_names[static_cast<int>(l.fsdp)]
                  : l.engine == sharding::zero ? "ZeRO-" + std::to_string(l.zero_stage) : std::string("DDP");
  if (l.offload.optimizer || l.offload.parameters) s += l.offload.parameters ? " + full offload" : " + opt. offload";
  if (l.tensor_parallel > 1) s += ", TP " + std::to_string(l.tensor_parallel);
  if (l.pipeline_parallel > 1) s += ", PP " + std::to_string(l.pipeline_parallel);
  if (l.model_parallel() > 1) s += " × DP " + std::to_string(l.data_parallel());
  return s;
}

int main() {
  std::cout << "**Llama-2-13B, bf16 + fp32 master, AdamW, 1 × 4096 tokens per GPU, on " << devices::a100_80gb.name << "** (one GPU alone: "
            << format_bytes(facts.single.total()) << ")\n\n";
  std::cout << "GPUs needed: ZeRO-3 " << min_gpus(facts, zero(3, 1)) << ", FSDP FULL_SHARD " << min_gpus(facts, fsdp(fsdp_strategy::full_shard, 1))
            << " (FSDP2 " << min_gpus(facts, fsdp2(fsdp_strategy::full_shard, 1)) << "), TP 2 × FSDP FULL_SHARD " << min_gpus(facts, tp2_fsdp)
            << ", ZeRO-3 + optimizer offload " << min_gpus(facts, zero(3, 1, {true, false})) << ".\n\n";
  const auto on_gpu = per_rank(facts, zero(3, 8)), offloaded = per_rank(facts, zero(3, 8, {true, false}));
  std::cout << "What offload buys on 8 GPUs: ZeRO-3 moves " << format_bytes(offloaded.host_model_states) << " of optimizer state per rank to the host, "
            << format_bytes(on_gpu.total() - offloaded.total()) << " less per GPU, for " << format_bytes(step_cost(offloaded) - step_cost(on_gpu))
            << " more traffic per step (host bytes weighted 10 ×).\n\n";
  std::vector<labelled_rank> cols;
  for (const auto& l : {zero(3, 8), fsdp(fsdp_strategy::full_shard, 8), tp2_zero1, tp2_fsdp, zero(3, 8, {true, false}), zero(3, 8, {true, true})})
    cols.push_back({name(l), per_rank(facts, l)});
  std::cout << "One rank of 8 GPUs:\n\n" << rank_comparison_table(cols);
  std::vector<labelled_rank> stages;
  for (std::int64_t s = 0; s < tp2_pp2.pipeline_parallel; ++s) stages.push_back({"stage " + std::to_string(s), per_rank_at_stage(facts, tp2_pp2, s)});
  std::cout << "\nZeRO-1, TP 2 × PP 2 × DP 2, every pipeline stage:\n\n" << rank_comparison_table(stages) << "\nThe planner's ranking on 8 GPUs over TP × PP × engine × offload (fitting first, then by bytes sent per step + 10 × host\n"
               "traffic + tensor-parallel all-reduces, pipeline sends and the pipeline bubble):\n\n";
  for (const auto& c : rank_layouts(facts, 8))
    if (c.valid)
      std::cout << "- " << name(c.layout) << ": " << format_bytes(c.budget.total()) << " per rank, " << (c.fits ? "fits" : "does not fit") << ", cost "
                << format_bytes(c.cost) << "\n";
}
