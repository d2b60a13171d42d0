// Llama-2-7B full fine-tune with AdamW on 8 × A100-40GB: which ZeRO stage fits per rank?
//
// Pure bf16 weights with an fp32 master copy (DeepSpeed's bf16 engine), AdamW, one sequence of
// 2048 tokens per GPU. Each rank holds its share of the model states — DeepSpeed's estimators'
// terms: 2-byte parameters and gradients, 16 bytes per parameter of fp32 master, momentum,
// variance and gradient partitions (ZeRO-2's 16-bit gradients partitioned, as the engine keeps
// them; DeepSpeed's estimator counts them whole) — plus what the estimators leave out: the activations of its
// own micro-batch (the single-GPU liveness walk), reduce buckets, NCCL buffers, the CUDA context
// and the allocator's reserve. The answers are checked at compile time.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/transformers.hpp>

#include <iostream>
#include <string>

using namespace gpubudget;

constexpr auto net = models::llama(models::llama2_7b(2048));
constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto facts = rank_facts(net, per_gpu, devices::a100_40gb);

constexpr offload_policy optimizer_to_cpu{true, false}, everything_to_cpu{true, true};
constexpr parallel_layout layouts[] = {zero(0, 8), zero(1, 8), zero(2, 8), zero(2, 8, optimizer_to_cpu),
                                       zero(3, 8), zero(3, 8, optimizer_to_cpu), zero(3, 8, everything_to_cpu)};

// ZeRO-0/1 keep the 2-byte parameters and gradients whole on every rank (25 GiB) and do not fit;
// ZeRO-2 partitions the gradients but still keeps every 16-bit parameter (12.6 GiB) next to the
// optimizer partition (12.6 GiB) and one sequence's activations (14.6 GiB): no fit either.
// ZeRO-2 with the optimizer offloaded, and ZeRO-3, fit.
static_assert(!fits_per_rank(per_rank(facts, zero(0, 8))));
static_assert(!fits_per_rank(per_rank(facts, zero(1, 8))));
static_assert(!fits_per_rank(per_rank(facts, zero(2, 8))));
static_assert(fits_per_rank(per_rank(facts, zero(2, 8, optimizer_to_cpu))));
constexpr auto zero3 = per_rank(facts, zero(3, 8));
static_assert(require_fits_per_rank<zero3>);
// ZeRO-3 model states = DeepSpeed's estimate_zero3_model_states_mem_needs for 6.74 B parameters
// whose largest layer (the embedding) has 131 M: 4 × 131,072,000 + 18 × 6,738,415,616 / 8.
static_assert(zero3.model_states() == deepspeed_zero3_gpu_bytes(6'738'415'616, 131'072'000, 8, false, false));

// Without offload, ZeRO-3 needs 6 GPUs and FSDP FULL_SHARD 6; on 8 with data parallelism only,
// FULL_SHARD is the cheapest layout that fits (3Ψ per step like ZeRO-3, with a smaller rank: no
// 5e8-element reduce bucket).
constexpr parallel_layout data_parallel_only{};
static_assert(min_gpus(facts, zero(3, 1)) == 6);
static_assert(cheapest_layout(facts, 8, data_parallel_only).engine == sharding::fsdp);

std::string name(const parallel_layout& l) {
  static const char* fsdp_names[] = {"FSDP FULL_SHARD", "FSDP SHARD_GRAD_OP", "FSDP HYBRID_SHARD", "FSDP NO_SHARD"};
  std::string s = l.engine == sharding::fsdp ? fsdp_names[static_cast<int>(l.fsdp)]
                  : l.engine == sharding::zero ? "ZeRO-" + std::to_string(l.zero_stage) : std::string("DDP");
  if (l.offload.parameters) s += " + full offload";
  else if (l.offload.optimizer) s += " + opt. offload";
  if (l.tensor_parallel > 1) s += ", TP " + std::to_string(l.tensor_parallel);
  if (l.pipeline_parallel > 1) s += ", PP " + std::to_string(l.pipeline_parallel);
  return s;
}

int main() {
  std::cout << "**Llama-2-7B, bf16 + fp32 master, AdamW, 1 × 2048 tokens per GPU, 8 × " << devices::a100_40gb.name
            << ": one rank per ZeRO stage** (one GPU alone would need " << format_bytes(facts.single.total()) << ")\n\n";
  std::vector<labelled_rank> cols;
  for (const auto& l : layouts) cols.push_back({name(l), per_rank(facts, l)});
  std::cout << rank_comparison_table(cols) << "\n";
  std::cout << "Smallest world size that fits: ZeRO-3 " << min_gpus(facts, zero(3, 1)) << ", FSDP FULL_SHARD "
            << min_gpus(facts, fsdp(fsdp_strategy::full_shard, 1)) << ", ZeRO-2 + optimizer offload " << min_gpus(facts, zero(2, 1, optimizer_to_cpu))
            << " GPUs.\n\nData-parallel layouts on 8 GPUs that fit, cheapest first (bytes one rank sends per step + 10 × host traffic):\n\n";
  for (const auto& c : rank_layouts(facts, 8, data_parallel_only))
    if (c.fits) std::cout << "- " << name(c.layout) << ": " << format_bytes(c.budget.total()) << " per rank, cost " << format_bytes(c.cost) << "\n";
  std::cout << "\nWith tensor (in the node) and pipeline parallelism too (+ all-reduces, sends and the bubble), the five cheapest:\n\n";
  const auto ranked = rank_layouts(facts, 8);
  for (std::size_t i = 0; i < 5 && ranked[i].fits; ++i)
    std::cout << "- " << name(ranked[i].layout) << ": " << format_bytes(ranked[i].budget.total()) << " per rank, cost " << format_bytes(ranked[i].cost) << "\n";
}
