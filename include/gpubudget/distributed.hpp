// gpubudget/distributed.hpp — per-rank budgets when one model is trained on many GPUs with
// DeepSpeed ZeRO, PyTorch FSDP (FSDP1 and FSDP2), plain DDP, and Megatron-style tensor /
// sequence / pipeline / context / expert parallelism.
//
//   training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};  // per-rank micro-batch
//   constexpr auto r = per_rank_budget(llama(llama2_7b(2048)), per_gpu, zero(3, 8), devices::a100_40gb);
//   static_assert(require_fits_per_rank<r>);   // names the failing rank and its MiB
//   constexpr auto f = rank_facts(model, per_gpu, devices::a100_40gb);
//   min_gpus(f, zero(3, 1));                    // smallest world size at which every rank fits
//   cheapest_layout(f, 8);                      // TP x PP x ZeRO stage / FSDP strategy / offload, by cost
//   per_rank_at_stage(f, megatron(64, 8, 4, true, true), 3);  // one pipeline stage's rank
//
// What a rank holds:
//  * model states (parameters, gradients, optimizer state) as the engine shards and stores them,
//    plus the unsharded working copies it gathers (ZeRO-3's largest layer, FSDP's units);
//  * communication buffers (ZeRO reduce buckets and prefetch window, NCCL's channel buffers);
//  * activations and temporaries of its own micro-batch: the single-GPU liveness walk of the
//    per-rank plan (`training::batch` is the per-rank micro-batch, DeepSpeed's
//    train_micro_batch_size_per_gpu), split by tensor / sequence / context parallelism, times the
//    micro-batches its pipeline stage holds in flight;
//  * with expert parallelism its share of the routed experts and the all-to-all token buffers;
//  * CUDA context, workspaces, allocator rounding and fragmentation as for one GPU.
// Frozen parameters count parameters only: no gradients and no optimizer state (estimators that
// take a total parameter count get this wrong for partial fine-tuning).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gpubudget/budget.hpp>
#include <gpubudget/check.hpp>
#include <gpubudget/base/combinations.hpp>
#include <gpubudget/base/diagnostics.hpp>
#include <gpubudget/flops.hpp>
#include <gpubudget/layers.hpp>
#include <gpubudget/report.hpp>

namespace gpubudget {

/// Which engine shards the model states over the data-parallel ranks.
enum class sharding : std::uint8_t {
  none,  ///< PyTorch DDP (or one GPU): every rank holds everything
  zero,  ///< DeepSpeed ZeRO, `parallel_layout::zero_stage` 0..3
  fsdp,  ///< PyTorch FSDP, `parallel_layout::fsdp`
  /// Megatron-LM's DDP: fp32 main gradients; `distributed_optimizer` shards the fp32 master
  /// weights and Adam state over the data-parallel ranks (--use-distributed-optimizer).
  megatron,
};

/// torch.distributed.fsdp.ShardingStrategy.
enum class fsdp_strategy : std::uint8_t { full_shard, shard_grad_op, hybrid_shard, no_shard };

/// CPU offload. DeepSpeed: offload_optimizer / offload_param (the latter at stage 3 only).
/// FSDP: CPUOffload(offload_params=True) moves parameters, gradients and the optimizer step to
/// the host together, so FSDP takes `parameters` (with or without `optimizer`), never `optimizer` alone.
struct offload_policy {
  bool optimizer = false;
  bool parameters = false;
};

/// DeepSpeed ZeRO settings that size per-rank buffers. Defaults are DeepSpeed's
/// (deepspeed/runtime/zero/config.py, DeepSpeedZeroConfig: reduce_bucket_size 5e8,
/// stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9, all in elements).
struct deepspeed_settings {
  std::int64_t reduce_bucket_size = 500'000'000;
  std::int64_t stage3_prefetch_bucket_size = 50'000'000;
  std::int64_t stage3_max_live_parameters = 1'000'000'000;
  /// overlap_comm: ZeRO-1/2 then keep two reduce buffers instead of one (stage_1_and_2.py,
  /// ipg_buffer: buf_0, and buf_1 when overlap_comm). DeepSpeed's default is off for stages 1-2.
  bool overlap_comm = false;
  /// Count as DeepSpeed's ZeRO-2 estimator did from 2021 until DeepSpeed PR #5099 (June 2024):
  /// the whole 16-bit gradients (`4 * total_params + int(16 * total_params / total_gpus)`, as for
  /// ZeRO-1); its docs (docs/code-docs/source/memory.rst: 15.93 GB per GPU for T5-3B on 8) still
  /// print that. At run time ZeRO-2 reduces each gradient into its bucket as backward produces it
  /// and keeps only its partition (stage_1_and_2.py, partition_gradients), which is what gpubudget
  /// counts by default and what the estimator counts since #5099 (`2 * total_params +
  /// int(18 * total_params / total_gpus)`).
  bool estimator_accounting = false;
};

/// NCCL's staging buffers: NCCL_BUFFSIZE per channel and direction (NCCL environment variables
/// docs: NCCL_BUFFSIZE default 4194304 = 4 MiB). The channel count depends on the topology
/// (NCCL picks up to NCCL_MAX_NCHANNELS); 16 is an assumption for an NVLink node, to be
/// replaced by a measurement.
struct nccl_settings {
  std::int64_t buffsize = 4 * MiB;
  std::int64_t channels = 16;
};

/// How a step is spread over `world_size` GPUs.
struct parallel_layout {
  std::int64_t world_size = 1;
  sharding engine = sharding::none;
  std::int64_t zero_stage = 0;                    ///< engine == zero: 0, 1, 2 or 3
  fsdp_strategy fsdp = fsdp_strategy::full_shard;  ///< engine == fsdp
  std::int64_t shard_group = 0;                   ///< HYBRID_SHARD: GPUs per shard group (0: one node of 8)
  /// engine == fsdp: 1 for FullyShardedDataParallel (flat parameters), 2 for fully_shard (FSDP2:
  /// per-parameter DTensor shards; FULL_SHARD is reshard_after_forward=True, SHARD_GRAD_OP False,
  /// HYBRID_SHARD a 2-D device mesh; there is no NO_SHARD).
  std::int64_t fsdp_version = 1;
  offload_policy offload{};
  std::int64_t tensor_parallel = 1, pipeline_parallel = 1, context_parallel = 1;
  /// Expert parallel size: the routed experts of MoE layers (layers/moe.hpp) sharded over `ep`
  /// ranks of the data-parallel group; must divide the expert count and the data-parallel size.
  std::int64_t expert_parallel = 1;
  bool sequence_parallel = false;  ///< Megatron sequence parallelism (with tensor_parallel > 1)
  std::int64_t virtual_pipeline = 1;  ///< interleaved 1F1B: model chunks per pipeline stage (1: plain 1F1B)
  std::int64_t micro_batches = 0;     ///< micro-batches per step (0: at least pipeline_parallel)
  bool ddp_gradient_as_bucket_view = false;  ///< DDP's gradient_as_bucket_view (default False)
  bool distributed_optimizer = false;        ///< engine == megatron: --use-distributed-optimizer
  deepspeed_settings deepspeed{};
  nccl_settings nccl{};

  constexpr std::int64_t model_parallel() const { return tensor_parallel * pipeline_parallel * context_parallel; }
  /// Data-parallel replicas: world / (tp · pp · cp).
  constexpr std::int64_t data_parallel() const { return world_size / model_parallel(); }
  /// Ranks one copy of the model states is sharded over.
  constexpr std::int64_t shard_degree() const {
    if (engine == sharding::none) return 1;
    if (engine == sharding::megatron) return distributed_optimizer ? data_parallel() : 1;
    if (engine == sharding::zero) return zero_stage == 0 ? 1 : data_parallel();
    if (fsdp == fsdp_strategy::no_shard) return 1;
    if (fsdp == fsdp_strategy::hybrid_shard) return shard_group > 0 ? shard_group : 8;
    return data_parallel();
  }
};

/// Plain data parallelism (DDP) over `gpus` GPUs.
constexpr parallel_layout ddp(std::int64_t gpus) { return {.world_size = gpus}; }
/// DeepSpeed ZeRO `stage` over `gpus` GPUs.
constexpr parallel_layout zero(std::int64_t stage, std::int64_t gpus, offload_policy o = {}) {
  return {.world_size = gpus, .engine = sharding::zero, .zero_stage = stage, .offload = o};
}
/// FSDP with `strategy` over `gpus` GPUs (`group`: HYBRID_SHARD's shard group size).
constexpr parallel_layout fsdp(fsdp_strategy strategy, std::int64_t gpus, offload_policy o = {}, std::int64_t group = 0) {
  return {.world_size = gpus, .engine = sharding::fsdp, .fsdp = strategy, .shard_group = group, .offload = o};
}
/// FSDP2 (`fully_shard`) with `strategy` over `gpus` GPUs.
constexpr parallel_layout fsdp2(fsdp_strategy strategy, std::int64_t gpus, offload_policy o = {}, std::int64_t group = 0) {
  auto l = fsdp(strategy, gpus, o, group);
  l.fsdp_version = 2;
  return l;
}

/// Megatron-LM on `gpus` GPUs: tensor `tp`, pipeline `pp`, sequence parallelism, distributed optimizer.
constexpr parallel_layout megatron(std::int64_t gpus, std::int64_t tp, std::int64_t pp, bool sp, bool distributed_optimizer) {
  return {.world_size = gpus, .engine = sharding::megatron, .tensor_parallel = tp, .pipeline_parallel = pp, .sequence_parallel = sp,
          .distributed_optimizer = distributed_optimizer};
}

/// The parameter counts the per-rank terms need.
struct parameter_facts {
  std::int64_t total = 0;          ///< parameter elements
  std::int64_t trainable = 0;      ///< of which require grad
  std::int64_t largest_layer = 0;  ///< largest parameter tensor (DeepSpeed's largest_layer_params)
  std::int64_t largest_unit = 0;   ///< largest repeated block (FSDP's wrap unit; the model if none)
};

/// What tensor and pipeline parallelism must divide (from the model's records).
struct split_facts {
  std::int64_t layers = 0;  ///< copies of the repeated blocks (transformer layers); 0: unknown
  /// gcd of every attention's heads and key/value heads and of every linear width inside a repeated
  /// block (projections, FFN); tensor parallelism must divide it. 0: no constraint. The vocabulary
  /// is left out: Megatron pads it (--make-vocab-size-divisible-by).
  std::int64_t tp_divides = 0;
};

/// Where parameters and saved activations sit along the model, for pipeline stages: the first
/// stage holds what comes before the repeated blocks (the input embedding), the last stage what
/// comes after them (final norm, head, loss), every stage 1/pp of the blocks.
struct stage_facts {
  std::int64_t first_params = 0, last_params = 0;        ///< parameter elements before / after the blocks (norms aside)
  std::int64_t first_trainable = 0, last_trainable = 0;  ///< of which require grad
  /// Parameters of the norms (LayerNorm, RMSNorm), which tensor parallelism replicates; Megatron's
  /// accounting spreads them evenly over the stages (replicated_params_in_transformer_block / pp).
  std::int64_t norm_params = 0, norm_trainable = 0;
  /// A weight the head after the blocks shares with a layer before them (a tied word embedding):
  /// with pp > 1 the last stage holds a copy of its own with gradients and optimizer state, and
  /// all-reduces its gradient with the first stage (Megatron-LM, megatron/core/models/common/
  /// language_module/language_module.py, setup_embeddings_and_output_layer).
  std::int64_t tied_params = 0, tied_trainable = 0;
  /// Bytes one micro-batch holds for backward: saved before the blocks, after them, and in all
  /// blocks (checkpointed blocks: at least their inputs, which the checkpoints keep).
  std::int64_t first_saved = 0, last_saved = 0, blocks_saved = 0;
  /// What one block saves when it is not checkpointed: the temporaries of its backward (a gradient
  /// per saved tensor at most), or of its recomputation when it is checkpointed.
  std::int64_t one_block_saves = 0;
  /// One repeated block's output for one micro-batch: what tensor parallelism all-reduces and a
  /// pipeline stage sends to the next (s·b·h 16-bit elements in a transformer).
  std::int64_t block_output_bytes = 0;
};

/// The routed experts of the mixture-of-experts layers (layers/moe.hpp), for expert parallelism.
struct expert_facts {
  std::int64_t experts = 0;       ///< gcd of the MoE layers' expert counts (0: no MoE layer)
  std::int64_t params = 0;        ///< routed experts' parameter elements (routers excluded)
  std::int64_t trainable = 0;     ///< of which require grad
  std::int64_t dispatch_bytes = 0;  ///< the largest MoE layer's routed token copies (tokens · top_k · width), one direction
};

/// What one single-GPU walk of the per-rank plan gives every layout: computed once, then every
/// layout and world size is arithmetic (min_gpus, cheapest_layout).
struct step_facts {
  memory_budget single{};          ///< the single-GPU budget of the per-rank plan
  parameter_facts params{};
  /// Activations and temporaries at their peak: the forward's peak, or the forward/backward peak
  /// minus the .grad tensors then alive, whichever is larger.
  std::int64_t activations = 0;
  std::int64_t forward_flops = 0;  ///< forward FLOPs of one micro-batch (flops.hpp), for the pipeline bubble
  split_facts split{};
  stage_facts stages{};
  expert_facts experts{};
};

/// One rank's budget. Components (rank_components) add up to total().
struct rank_budget {
  parallel_layout layout{};
  training plan{};
  std::string_view device_name{};
  catalog_gpu device_id = catalog_gpu::custom;
  std::int64_t capacity = 0;
  parameter_facts params{};
  std::int64_t pipeline_stage = 0;  ///< this rank's pipeline stage (per_rank: the worst one)

  // Model states on this rank's GPU, as DeepSpeed's estimators count them.
  std::int64_t parameters = 0, gradients = 0, optimizer_state = 0;
  std::int64_t gathered_parameters = 0;  ///< unsharded working copies (ZeRO-3 largest layer, FSDP units)
  // Buffers.
  std::int64_t comm_buckets = 0;  ///< ZeRO reduce buckets, ZeRO-3 prefetch, DDP's gradient buckets
  std::int64_t expert_all_to_all = 0;  ///< expert parallelism: routed tokens sent and received (one MoE layer)
  std::int64_t nccl_buffers = 0;
  // Per micro-batch, from the single-GPU walk.
  std::int64_t step_peak = 0;  ///< activations, or the optimizer step's temporaries when larger
  std::int64_t buffers = 0, input_batch = 0;
  std::int64_t cuda_context = 0, workspace = 0, allocator_rounding = 0, fragmentation = 0;
  std::int64_t host_model_states = 0;  ///< offloaded to the CPU (per rank), not on the GPU

  /// Parameters + gradients + optimizer state (+ gathered copies): DeepSpeed's estimator figure.
  constexpr std::int64_t model_states() const { return parameters + gradients + optimizer_state + gathered_parameters; }
  constexpr std::int64_t tensor_bytes() const { return model_states() + comm_buckets + expert_all_to_all + step_peak + buffers + input_batch; }
  constexpr std::int64_t total() const {
    return tensor_bytes() + nccl_buffers + cuda_context + workspace + allocator_rounding + fragmentation;
  }
  constexpr std::int64_t headroom() const { return capacity - total(); }
};

/// The lines of a rank's budget, in table order; they add up to r.total().
constexpr std::array<budget_component, 14> rank_components(const rank_budget& r) {
  using k = component_kind;
  return {{{"parameters", "Parameters (this rank)", r.parameters, k::resident, true},
           {"gradients", "Gradients (this rank)", r.gradients, k::resident, true},
           {"optimizer_state", "Optimizer state + fp32 master (this rank)", r.optimizer_state, k::resident, true},
           {"gathered_parameters", "Gathered (unsharded) parameters", r.gathered_parameters, k::step, false},
           {"comm_buckets", "Reduce / prefetch buckets", r.comm_buckets, k::step, false},
           {"expert_all_to_all", "Expert all-to-all buffers", r.expert_all_to_all, k::step, false},
           {"step_peak", "Activations + temporaries (at peak)", r.step_peak, k::step, true},
           {"buffers", "Buffers", r.buffers, k::resident, false},
           {"input_batch", "Input batch", r.input_batch, k::resident, true},
           {"nccl_buffers", "NCCL buffers", r.nccl_buffers, k::device_reserved, false},
           {"cuda_context", "CUDA context", r.cuda_context, k::device_reserved, true},
           {"workspace", "cuBLAS + cuDNN workspace", r.workspace, k::device_allocated, true},
           {"allocator_rounding", "Allocator rounding (512 B blocks)", r.allocator_rounding, k::device_allocated, true},
           {"fragmentation", "Fragmentation reserve", r.fragmentation, k::device_reserved, true}}};
}

namespace detail {

/// A layout the engines accept; otherwise a named compile-time error.
constexpr void validate(const parallel_layout& l) {
  if (l.world_size <= 0 || l.tensor_parallel <= 0 || l.pipeline_parallel <= 0 || l.context_parallel <= 0 || l.expert_parallel <= 0 ||
      l.shard_group < 0 || l.virtual_pipeline <= 0 || l.micro_batches < 0)
    parallel_size_must_be_positive();
  if (l.world_size % l.model_parallel() != 0) world_size_not_divisible_by_tp_pp_cp();
  if (l.engine == sharding::zero && (l.zero_stage < 0 || l.zero_stage > 3)) zero_stage_out_of_range();
  const bool any_offload = l.offload.optimizer || l.offload.parameters;
  if (any_offload && (l.engine == sharding::none || l.engine == sharding::megatron || (l.engine == sharding::zero && l.zero_stage == 0)))
    offload_needs_zero_or_fsdp();
  if (l.engine == sharding::zero && l.offload.parameters && l.zero_stage != 3) parameter_offload_needs_zero_stage_3();
  if (l.engine == sharding::fsdp && l.offload.optimizer && !l.offload.parameters) fsdp_offload_moves_parameters_and_optimizer_together();
  if (l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard && l.data_parallel() % l.shard_degree() != 0)
    hybrid_shard_group_does_not_divide_data_parallel_size();
  if (l.engine == sharding::fsdp && (l.fsdp_version < 1 || l.fsdp_version > 2)) fsdp_version_must_be_1_or_2();
  if (l.engine == sharding::fsdp && l.fsdp_version == 2 && l.fsdp == fsdp_strategy::no_shard) fsdp2_has_no_no_shard();
}

/// Tensor parallelism must divide the heads and the FFN; pipeline stages need a layer each.
constexpr void validate_split(const split_facts& s, const parallel_layout& l) {
  if (s.tp_divides > 0 && s.tp_divides % l.tensor_parallel != 0) tensor_parallel_does_not_divide_heads();
  if (s.layers > 0 && l.pipeline_parallel > s.layers) pipeline_parallel_larger_than_layer_count();
}

/// Expert parallelism needs MoE layers whose expert count it divides, and ranks to take from the
/// data-parallel group (Megatron-LM: "data_parallel_size % expert_model_parallel_size == 0" when
/// experts are not tensor-split; DeepSpeed-MoE builds its expert groups out of the data-parallel ranks).
constexpr void validate_experts(const expert_facts& e, const parallel_layout& l) {
  if (l.expert_parallel == 1) return;
  if (l.data_parallel() % l.expert_parallel != 0) expert_parallel_does_not_divide_data_parallel_size();
  if (e.experts == 0) expert_parallel_needs_a_mixture_of_experts_model();
  if (e.experts % l.expert_parallel != 0) expert_parallel_does_not_divide_expert_count();
}

constexpr std::int64_t gcd(std::int64_t a, std::int64_t b) {
  while (b != 0) {
    const auto t = a % b;
    a = b, b = t;
  }
  return a;
}

/// The split facts of a model's records.
template <std::size_t N>
constexpr split_facts split_facts_of(const std::array<layer, N>& rs) {
  split_facts f{};
  std::int64_t repeats = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const auto& L = rs[i];
    if (L.kind == node_kind::repeat) {
      repeats += L.count;
      for (std::size_t j = i + 1; j < i + static_cast<std::size_t>(L.span) && j < N; ++j)
        if (rs[j].kind == node_kind::leaf && rs[j].op == &op_entry<gpubudget::linear_op>::descriptor)
          f.tp_divides = gcd(f.tp_divides, op_of<gpubudget::linear_op>(rs[j]).out_features);
    }
    if (L.kind == node_kind::leaf && L.op == &op_entry<gpubudget::attention_op>::descriptor) {
      const auto a = op_of<gpubudget::attention_op>(L);
      f.tp_divides = gcd(gcd(f.tp_divides, a.heads), a.kv_heads);
    }
    if (L.kind == node_kind::leaf && L.op == &op_entry<gpubudget::cross_attention_op>::descriptor)
      f.tp_divides = gcd(f.tp_divides, op_of<gpubudget::cross_attention_op>(L).heads);
  }
  f.layers = repeats;
  return f;
}

constexpr std::int64_t shard(std::int64_t bytes, std::int64_t n) { return (bytes + n - 1) / n; }

/// Model states on one rank's GPU (and on its host).
struct rank_states {
  std::int64_t params = 0, grads = 0, opt = 0, gathered = 0, host = 0;
};

/// Bytes per element of the 16-bit (or fp32) working parameters and gradients, and per
/// trainable element of what the optimizer keeps: DeepSpeed's fp16/bf16 engines keep an fp32
/// master copy, Adam's momentum and variance, and an fp32 gradient partition: 16 bytes per
/// parameter (DeepSpeed's estimators: `16 * total_params` in
/// deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs, "18" = 2 + 16
/// in stage3.py estimate_zero3_model_states_mem_needs). Without master weights (fp32, AMP):
/// the optimizer's own state only.
struct element_bytes {
  std::int64_t param = 4, grad = 4, opt = 8;
};
constexpr element_bytes zero_element_bytes(const training& p) {
  const auto t = types_of(p.precision);
  const auto pb = bytes_of(1, t.parameters);
  return {pb, pb, optimizer_state_bytes_per_param(p.optimizer) + (t.pure16 ? 8 : 0)};
}

/// DeepSpeed ZeRO, matching estimate_zero2_model_states_mem_needs (stage 2: GPU `2 * total_params +
/// int(18 * total_params / total_gpus)` since DeepSpeed PR #5099, `4 * total_params + int(16 *
/// total_params / total_gpus)` before it and for ZeRO-1 or with `estimator_accounting`; with
/// cpu_offload `2 * total_params`) and estimate_zero3_model_states_mem_needs (stage 3: `4 * largest_layer_params +
/// int(18 * total_params / total_gpus)`; offload_optimizer `4 * largest + int(2 * total / gpus)`;
/// both offloads `4 * largest`), with `total` split into trainable and frozen elements. By default
/// ZeRO-2's 16-bit gradients are partitioned (2·T/N), as the engine keeps them.
constexpr rank_states zero_states(const parameter_facts& f, const training& p, const parallel_layout& l) {
  const auto e = zero_element_bytes(p);
  const auto n = l.shard_degree();
  const auto params = checked_mul(f.total, e.param), grads = checked_mul(f.trainable, e.grad), opt = checked_mul(f.trainable, e.opt);
  rank_states s{};
  if (l.zero_stage == 0) return {params, grads, opt, 0, 0};
  if (l.zero_stage < 3) {
    s.params = params;
    // Offloaded, gradients go to the host partition as they are reduced (GPU term 2·P only).
    const bool partitioned = l.zero_stage == 2 && !l.deepspeed.estimator_accounting;
    s.grads = l.offload.optimizer ? 0 : partitioned ? shard(grads, n) : grads;
    s.opt = l.offload.optimizer ? 0 : shard(opt, n);
    s.host = l.offload.optimizer ? shard(opt, n) : 0;
    return s;
  }
  // Stage 3: the 16-bit parameter partition and the optimizer partition (master, moments, fp32
  // gradients); the gathered largest layer's 16-bit parameters and gradients (4 bytes/element).
  s.params = l.offload.parameters ? 0 : shard(params, n);
  s.opt = l.offload.optimizer ? 0 : shard(opt, n);
  s.gathered = checked_mul(f.largest_layer, e.param + e.grad);
  s.host = (l.offload.parameters ? shard(params, n) : 0) + (l.offload.optimizer ? shard(opt, n) : 0);
  return s;
}

/// PyTorch FSDP: parameters sharded in full precision (FSDP1: flat parameters padded to a multiple
/// of the world size; FSDP2: each parameter split on dim 0, padded to ceil(dim 0 / N) rows: either
/// way at most a row per tensor more than P/N, left out) (MixedPrecision keeps "the sharded
/// parameters in full precision" and casts to param_dtype for compute: torch.distributed.fsdp
/// MixedPrecision docs), their sharded fp32 gradients and the optimizer's state of the shard.
/// Unsharded: FULL_SHARD / HYBRID_SHARD gather one unit and prefetch the next
/// (BackwardPrefetch.BACKWARD_PRE, the default, "increases memory usage" by the next unit's
/// parameters: FSDP docs) and hold one unit's unsharded gradients before the reduce-scatter;
/// SHARD_GRAD_OP keeps the parameters unsharded from forward to backward ("parameters are not
/// freed after forward": ShardingStrategy docs); NO_SHARD keeps a low-precision copy under
/// MixedPrecision.
constexpr rank_states fsdp_states(const parameter_facts& f, const training& p, const parallel_layout& l) {
  const auto t = types_of(p.precision);
  const std::int64_t cb = t.autocast || t.pure16 ? 2 : 4;
  const auto n = l.shard_degree();
  rank_states s{};
  const auto params = shard(checked_mul(f.total, 4), n), grads = shard(checked_mul(f.trainable, 4), n);
  const auto opt = shard(checked_mul(f.trainable, optimizer_state_bytes_per_param(p.optimizer)), n);
  if (l.offload.parameters) s.host = params + grads + opt;
  else s.params = params, s.grads = grads, s.opt = opt;
  const auto unit = checked_mul(f.largest_unit, cb);
  switch (l.fsdp) {
    case fsdp_strategy::full_shard:
    case fsdp_strategy::hybrid_shard: s.gathered = 3 * unit; break;
    case fsdp_strategy::shard_grad_op: s.gathered = checked_mul(f.total, cb) + unit; break;
    case fsdp_strategy::no_shard: s.gathered = cb == 2 ? checked_mul(f.total, cb) : 0; break;
  }
  // FSDP2 gathers a unit into one flat all-gather output and copies it out into the
  // per-parameter unsharded tensors, and copies a unit's unsharded gradients into a flat
  // reduce-scatter input (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py:
  // foreach_all_gather, foreach_all_gather_copy_out, foreach_reduce); FSDP1 gathers into and
  // reduce-scatters from the flat parameter itself. Two more units, counted as both alive.
  if (l.fsdp_version == 2) s.gathered += 2 * unit;
  return s;
}

/// Megatron-LM: 16-bit parameters, fp32 main gradients (4 bytes), fp32 master weights and Adam's
/// two moments (12 bytes), the latter sharded with the distributed optimizer: 18 bytes per
/// parameter, or 6 + 12/dp (megatron/training/theoretical_memory_usage.py,
/// compute_weight_and_optimizer_memory: `18 if not args.use_distributed_optimizer else 6 + (12 /
/// args.data_parallel_size)`). Frozen parameters keep their 16-bit weights only.
constexpr rank_states megatron_states(const parameter_facts& f, const training& p, const parallel_layout& l) {
  const auto t = types_of(p.precision);
  const auto opt = checked_mul(f.trainable, optimizer_state_bytes_per_param(p.optimizer) + (t.pure16 ? 4 : 0));
  return {bytes_of(f.total, t.parameters), checked_mul(f.trainable, 4), shard(opt, l.shard_degree()), 0, 0};
}

/// DDP / one GPU: what the single-GPU budget holds (parameters, .grad, master weights for
/// pure 16-bit, optimizer state).
constexpr rank_states replicated_states(const parameter_facts& f, const training& p) {
  const auto t = types_of(p.precision);
  const auto opt = checked_mul(f.trainable, optimizer_state_bytes_per_param(p.optimizer) + (t.pure16 ? 4 : 0));
  return {bytes_of(f.total, t.parameters), bytes_of(f.trainable, t.parameters), opt, 0, 0};
}

constexpr rank_states states_of(const parameter_facts& f, const training& p, const parallel_layout& l) {
  if (p.inference) return {bytes_of(f.total, types_of(p.precision).parameters), 0, 0, 0, 0};
  switch (l.engine) {
    case sharding::zero: return zero_states(f, p, l);
    case sharding::fsdp: return fsdp_states(f, p, l);
    case sharding::megatron: return megatron_states(f, p, l);
    case sharding::none: break;
  }
  return replicated_states(f, p);
}

/// Communication buffers a rank allocates through PyTorch's allocator.
/// ZeRO-1/2: the contiguous reduce buffer of reduce_bucket_size elements (two with
/// overlap_comm; stage_1_and_2.py ipg_buffer). ZeRO-3: its reduce bucket
/// (stage3.py, the ipg bucket of reduce_bucket_size elements) and the prefetch window of
/// stage3_prefetch_bucket_size elements, capped by stage3_max_live_parameters less the
/// largest layer already counted. DDP: gradient buckets are a second copy of the gradients unless
/// gradient_as_bucket_view ("the saved memory size will be equal to the total gradients size":
/// DistributedDataParallel docs).
constexpr std::int64_t comm_bucket_bytes(const parameter_facts& f, const training& p, const parallel_layout& l) {
  if (p.inference || l.data_parallel() <= 1) return 0;
  const auto e = zero_element_bytes(p);
  const auto& d = l.deepspeed;
  if (l.engine == sharding::none) return l.ddp_gradient_as_bucket_view ? 0 : checked_mul(f.trainable, e.grad);
  if (l.engine != sharding::zero || l.zero_stage == 0) return 0;
  if (l.zero_stage < 3) return checked_mul(d.reduce_bucket_size, e.grad) * (d.overlap_comm ? 2 : 1);
  auto window = d.stage3_max_live_parameters - f.largest_layer;
  if (window > d.stage3_prefetch_bucket_size) window = d.stage3_prefetch_bucket_size;
  if (window > f.total) window = f.total;
  if (window < 0) window = 0;
  return checked_mul(d.reduce_bucket_size, e.grad) + checked_mul(window, e.param);
}


/// NCCL staging buffers: a send and a receive buffer per channel for each communicator a rank
/// uses (data parallel, and tensor / pipeline / context / expert groups when larger than 1).
constexpr std::int64_t nccl_bytes(const parallel_layout& l) {
  const std::int64_t groups =
      (l.data_parallel() > 1) + (l.tensor_parallel > 1) + (l.pipeline_parallel > 1) + (l.context_parallel > 1) + (l.expert_parallel > 1);
  return checked_mul(groups * 2 * l.nccl.channels, l.nccl.buffsize);
}

/// Elements of a model-wide `total` on pipeline stage `stage` of `pp`: 1/pp of the repeated
/// blocks, plus what precedes them on the first stage and what follows them on the last.
constexpr std::int64_t on_stage(std::int64_t total, std::int64_t first, std::int64_t last, std::int64_t stage, std::int64_t pp) {
  return shard(total - first - last, pp) + (stage == 0 ? first : 0) + (stage == pp - 1 ? last : 0);
}

/// One rank's parameters: the dense part (sharded over the data-parallel ranks) and the routed
/// experts (sharded over the expert-data-parallel ranks).
struct rank_slice {
  parameter_facts dense{}, experts{};
};

/// The parameters one rank of pipeline stage `stage` holds. Megatron splits every linear weight
/// and the vocabulary over the tensor ranks and the layers over the pipeline stages, and
/// replicates the norms over the tensor ranks; the first stage holds the input
/// embedding, the last the output layer ("1/pp_size transformer layers + 1 embedding layer" on
/// the most loaded shard, the norms `replicated_params_on_most_loaded_shard`:
/// megatron/training/theoretical_memory_usage.py). Expert parallelism shards the
/// routed experts once more over `ep` ranks while attention, routers, norms and embeddings stay
/// replicated over the expert group (ibid.: `expert_sharded_params / (expert_tensor_parallel_size
/// * expert_model_parallel_size)`, the rest `/ tensor_model_parallel_size`; DeepSpeed-MoE's
/// expert and expert-data-parallel groups, deepspeed/utils/groups.py).
constexpr rank_slice model_parallel_slice(const step_facts& f, const parallel_layout& l, std::int64_t stage) {
  const auto tp = l.tensor_parallel, pp = l.pipeline_parallel, ep = l.expert_parallel;
  const auto& st = f.stages;
  const auto& ex = f.experts;
  rank_slice r{};
  r.dense.total = shard(on_stage(f.params.total - ex.params - st.norm_params, st.first_params, st.last_params, stage, pp), tp) +
                  shard(st.norm_params, pp);
  r.dense.trainable =
      shard(on_stage(f.params.trainable - ex.trainable - st.norm_trainable, st.first_trainable, st.last_trainable, stage, pp), tp) +
      shard(st.norm_trainable, pp);
  if (pp > 1 && stage == pp - 1) r.dense.total += shard(st.tied_params, tp), r.dense.trainable += shard(st.tied_trainable, tp);
  r.experts.total = shard(ex.params, pp * tp * ep);
  r.experts.trainable = shard(ex.trainable, pp * tp * ep);
  // The largest tensor and FSDP's unit (one block) split by tp; a block's routed experts by ep too.
  const auto experts_per_block = f.split.layers > 0 ? ex.params / f.split.layers : 0;
  r.dense.largest_layer = shard(f.params.largest_layer, tp);
  r.dense.largest_unit = shard(f.params.largest_unit - experts_per_block + shard(experts_per_block, ep), tp);
  return r;
}

/// The layout the routed experts' states are sharded under: the expert-data-parallel group,
/// dp / ep ranks (Megatron: expert_data_parallel_size = world_size / (etp · ep · pp)).
constexpr parallel_layout expert_data_parallel(parallel_layout l) {
  l.world_size /= l.expert_parallel;
  l.expert_parallel = 1;
  if (l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard && l.shard_degree() > l.data_parallel()) l.shard_group = l.data_parallel();
  return l;
}

/// Model chunks × micro-batches whose activations pipeline stage `s` holds at its peak. 1F1B:
/// p − s (stage s runs p − s − 1 warm-up forwards, then one more before its first backward);
/// interleaved with v chunks per stage: (p − s − 1)·2 + (v − 1)·p warm-up chunk forwards, + 1
/// (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving:
/// num_warmup_microbatches), each chunk 1/(p·v) of the layers; stage 0 then holds 1 + (p −
/// 1)/(p·v) of the model's layer activations, Megatron's interleaved_schedule_memory_penalty
/// (theoretical_memory_usage.py). Fewer micro-batches than that cap it (m·v chunks).
constexpr std::int64_t chunks_in_flight(const parallel_layout& l, std::int64_t s) {
  const auto p = l.pipeline_parallel, v = l.virtual_pipeline, m = l.micro_batches;
  auto w = v > 1 ? (p - s - 1) * 2 + (v - 1) * p + 1 : p - s;
  if (m > 0 && w > m * v) w = m * v;
  return w;
}

/// Activations of one rank of pipeline stage `s`, from the single-GPU walk of one micro-batch.
/// Pipeline: the stage's 1/(p·v) of the blocks' saved bytes per chunk in flight, the embedding's
/// saves per micro-batch in flight on stage 0, the head's and loss's (one micro-batch: the last
/// stage runs each backward right after its forward) on the last stage with the walk's transient
/// peak (the bytes at peak beyond everything saved: in language models the loss's); other stages
/// get one block's backward (or recomputation) temporaries, bounded by what that block saves
/// without checkpointing (backward makes a gradient per saved tensor) and by the walk's
/// transient. Then Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
/// Transformer Models", Table 2): per layer s·b·h·(34 + 5·a·s/h) without parallelism;
/// tensor parallel alone leaves the 10·s·b·h of the norms and dropouts unsplit (10 + 24/t; with
/// flash attention, which keeps no a·s² scores, the factor is (10 + 24/t)/34); tensor + sequence
/// parallel divide all of it by t; context parallel splits the sequence (/cp).
constexpr std::int64_t stage_activations(const step_facts& f, const parallel_layout& l, std::int64_t s) {
  const auto t = l.tensor_parallel, p = l.pipeline_parallel, v = l.virtual_pipeline;
  std::int64_t a = f.activations;
  if (p > 1) {
    const auto& st = f.stages;
    const auto saved = st.first_saved + st.last_saved + st.blocks_saved;
    const auto w = chunks_in_flight(l, s);
    const auto transient = f.activations > saved ? f.activations - saved : 0;
    a = shard(checked_mul(st.blocks_saved, w), p * v);
    if (s == 0) a += shard(checked_mul(st.first_saved, w), v);
    if (s == p - 1) a += st.last_saved + transient;
    else a += transient < st.one_block_saves ? transient : st.one_block_saves;
  }
  if (t > 1) a = l.sequence_parallel ? shard(a, t) : shard(checked_mul(a, 10 * t + 24), 34 * t);
  return shard(a, l.context_parallel);
}

/// Expert parallelism's all-to-all buffers: the routed token copies a rank sends and the ones it
/// receives, for one MoE layer at a time (Megatron-LM megatron/core/transformer/moe/
/// token_dispatcher.py, MoEAlltoAllTokenDispatcher.token_dispatch: `global_input_tokens =
/// all_to_all(ep_group, permutated_local_input_tokens, ...)`, and token_combine the reverse).
/// Under uniform routing a rank receives as many token copies as it sends.
constexpr std::int64_t expert_all_to_all_bytes(const expert_facts& e, const parallel_layout& l) {
  if (l.expert_parallel <= 1) return 0;
  return shard(checked_mul(2, e.dispatch_bytes), l.context_parallel);
}

/// Optimizer temporaries of the shard this rank steps (DeepSpeed's fused / CPU Adam: none).
constexpr std::int64_t rank_optimizer_temporaries(const parameter_facts& slice, const parallel_layout& l, const training& p) {
  if (p.inference || l.engine == sharding::zero || l.offload.optimizer || l.offload.parameters) return 0;
  return optimizer_temporaries(p, slice.largest_layer, shard(slice.trainable, l.shard_degree()), dtype::fp32);
}

/// The states of the dense slice under `l` and of the routed experts under their
/// expert-data-parallel group, added.
constexpr rank_states rank_states_of(const rank_slice& slice, const training& p, const parallel_layout& l) {
  const auto d = states_of(slice.dense, p, l);
  if (slice.experts.total == 0) return d;
  const auto e = states_of(slice.experts, p, expert_data_parallel(l));
  return {d.params + e.params, d.grads + e.grads, d.opt + e.opt, d.gathered + e.gathered, d.host + e.host};
}
}  // namespace detail

/// The budget of one rank of pipeline stage `stage` (0 to pp − 1) under layout `l`, from the
/// single-GPU facts of the per-rank plan; every tensor / data / expert rank of a stage holds the same.
constexpr rank_budget per_rank_at_stage(const step_facts& f, const parallel_layout& l, std::int64_t stage) {
  detail::validate(l);
  detail::validate_split(f.split, l);
  detail::validate_experts(f.experts, l);
  if (stage < 0 || stage >= l.pipeline_parallel) detail::pipeline_stage_out_of_range();
  const auto& b = f.single;
  rank_budget r{};
  r.layout = l, r.plan = b.plan, r.device_name = b.device_name, r.device_id = b.device_id, r.capacity = b.capacity;
  r.pipeline_stage = stage;
  const auto slice = detail::model_parallel_slice(f, l, stage);
  r.params = slice.dense;
  r.params.total += slice.experts.total, r.params.trainable += slice.experts.trainable;
  const auto s = detail::rank_states_of(slice, b.plan, l);
  r.parameters = s.params, r.gradients = s.grads, r.optimizer_state = s.opt, r.gathered_parameters = s.gathered;
  r.host_model_states = s.host;
  r.comm_buckets = detail::comm_bucket_bytes(r.params, b.plan, l);
  r.expert_all_to_all = detail::expert_all_to_all_bytes(f.experts, l);
  r.nccl_buffers = detail::nccl_bytes(l);
  const auto act = detail::stage_activations(f, l, stage);
  const auto temps = detail::rank_optimizer_temporaries(r.params, l, b.plan);
  r.step_peak = act > temps ? act : temps;
  r.buffers = checked_add(b.buffers, b.base_weight_bytes), r.input_batch = b.input_batch;
  r.cuda_context = b.cuda_context, r.workspace = b.workspace(), r.allocator_rounding = b.allocator_rounding;
  r.fragmentation = checked_mul(r.tensor_bytes() + r.allocator_rounding, b.plan.fragmentation_percent) / 100;
  return r;
}

/// The worst rank's budget under layout `l`: the pipeline stage whose rank needs the most (the
/// first holds the most micro-batches in flight, the last the head and loss, which can be larger
/// for a big vocabulary); ties go to the earlier stage.
constexpr rank_budget per_rank(const step_facts& f, const parallel_layout& l) {
  auto worst = per_rank_at_stage(f, l, 0);
  for (std::int64_t s = 1; s < l.pipeline_parallel; ++s) {
    const auto r = per_rank_at_stage(f, l, s);
    if (r.total() > worst.total()) worst = r;
  }
  return worst;
}

namespace detail {
/// Parameters per copy of the largest repeated block (FSDP wraps each transformer block), or the
/// whole model when nothing repeats.
template <std::size_t N>
constexpr std::int64_t largest_unit(const model_budget<N>& b) {
  std::int64_t unit = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (b.records[i].kind == node_kind::repeat && b.records[i].count > 0) {
      const auto per_copy = b.per_record[i].parameter_count / b.records[i].count;
      if (per_copy > unit) unit = per_copy;
    }
  return unit > 0 ? unit : b.parameter_count;
}

/// A LayerNorm or RMSNorm leaf: weights tensor parallelism keeps whole on every rank.
constexpr bool is_norm(const layer& L) {
  return L.kind == node_kind::leaf && (L.op == &op_entry<layer_norm_op>::descriptor || L.op == &op_entry<rms_norm_op>::descriptor);
}

/// The parameters of the subtree before record `before` that a subtree inside [from, to) shares
/// (same share_id): a head tied to the input embedding. Only the first use counts parameters.
template <std::size_t N>
constexpr void add_tied_head(stage_facts& f, const model_budget<N>& b, std::size_t from, std::size_t to, std::size_t before) {
  for (std::size_t k = from; k < to; ++k) {
    if (b.records[k].share_id == 0) continue;
    for (std::size_t m = 0; m < before; ++m)
      if (b.records[m].share_id == b.records[k].share_id) {
        f.tied_params += b.per_record[m].parameter_count, f.tied_trainable += b.per_record[m].trainable_count;
        break;
      }
  }
}

/// Parameters and saved bytes of the top-level records before the first repeated block, after
/// the last one, and from the first to the last (the blocks). A model without repeated blocks is
/// all blocks: a pipeline cannot split it (validate_split knows no layer count then).
template <std::size_t N>
constexpr stage_facts stage_facts_of(const model_budget<N>& b) {
  stage_facts f{};
  const auto& rs = b.records;
  for (std::size_t i = 0; i < N; ++i)
    if (is_norm(rs[i])) f.norm_params += b.per_record[i].parameter_count, f.norm_trainable += b.per_record[i].trainable_count;
  if (N < 2 || rs[0].kind != node_kind::sequence) {  // only a sequence has stages in order
    f.blocks_saved = b.per_record[0].saved_bytes;
    return f;
  }
  std::size_t first_block = N, after_blocks = N;
  for (std::size_t j = 1; j < N; j += static_cast<std::size_t>(rs[j].span))
    if (rs[j].kind == node_kind::repeat) {
      if (first_block == N) first_block = j;
      after_blocks = j + static_cast<std::size_t>(rs[j].span);
    }
  if (first_block == N) first_block = 0;  // nothing repeats: all blocks
  std::size_t last_child = 1;
  for (std::size_t j = 1; j < N; j += static_cast<std::size_t>(rs[j].span)) {
    last_child = j;
    const auto& st = b.per_record[j];
    const bool before = j < first_block, after = j >= after_blocks;
    (before ? f.first_saved : after ? f.last_saved : f.blocks_saved) += st.saved_bytes;
    if (is_norm(rs[j])) continue;  // with the norms
    if (before) f.first_params += st.parameter_count, f.first_trainable += st.trainable_count;
    if (after) f.last_params += st.parameter_count, f.last_trainable += st.trainable_count;
  }
  // The head after the blocks; with no repeated block at the top (T5: its stacks sit inside
  // encoder_decoder), the last top-level record.
  if (first_block > 0) add_tied_head(f, b, after_blocks, N, first_block);
  else add_tied_head(f, b, last_child, N, last_child);
  return f;
}

/// Checkpointed blocks keep their inputs (torch.utils.checkpoint), which the 1.13 walk does not
/// count as saved; what one block saves without checkpointing comes from a walk of the model
/// with its checkpoints removed (only when there are any).
template <std::size_t N>
constexpr void add_block_facts(stage_facts& f, const std::array<layer, N>& records, const model_budget<N>& b, const training& plan,
                               std::int64_t layers) {
  bool checkpointed = plan.checkpoint_blocks || plan.checkpoint_all;
  std::int64_t inputs = 0;
  for (std::size_t i = 0; i < N; ++i) {
    checkpointed = checkpointed || records[i].flags.checkpoint;
    if (records[i].kind != node_kind::repeat) continue;
    inputs += checked_mul(records[i].count, b.per_record[i].output_bytes);
    if (b.per_record[i].output_bytes > f.block_output_bytes) f.block_output_bytes = b.per_record[i].output_bytes;
  }
  const auto per_block = [&](std::int64_t saved) { return layers > 0 ? shard(saved, layers) : saved; };
  if (!checkpointed) {
    f.one_block_saves = per_block(f.blocks_saved);
    return;
  }
  if (inputs > f.blocks_saved) f.blocks_saved = inputs;
  auto plain = records;
  for (auto& L : plain) L.flags.checkpoint = false;
  training unchecked = plan;
  unchecked.checkpoint_blocks = unchecked.checkpoint_all = false;
  model_budget<N> u{};
  u.records = plain;
  (void)simulate_step(plain, unchecked, &u.per_record);
  f.one_block_saves = per_block(stage_facts_of(u).blocks_saved);
}

/// The routed experts of every MoE layer: their parameters (each layer's record counts its
/// router, width × experts per copy, and its experts), the expert count, and the token copies
/// one layer routes: tokens × top_k (× capacity) rows of the layer's width, its output's dtype.
template <std::size_t N>
constexpr expert_facts expert_facts_of(const model_budget<N>& b) {
  expert_facts f{};
  for (std::size_t i = 0; i < N; ++i) {
    const auto& L = b.records[i];
    if (L.kind != node_kind::leaf || L.op != &op_entry<moe_op>::descriptor) continue;
    const auto op = op_of<moe_op>(L);
    const auto& st = b.per_record[i];
    const auto tokens = st.output[0], width = st.output[1];
    const auto experts = st.parameter_count - checked_mul(st.applications, checked_mul(width, op.experts));
    f.experts = gcd(f.experts, op.experts);
    f.params += experts;
    f.trainable += st.trainable_count == 0 ? 0 : st.trainable_count < experts ? st.trainable_count : experts;
    const auto per_expert = (checked_mul(checked_mul(tokens, op.top_k), op.capacity_percent) + op.experts * 100 - 1) / (op.experts * 100);
    const auto routed = checked_mul(per_expert < tokens ? per_expert : tokens, op.experts);
    const auto bytes = tokens > 0 ? checked_mul(st.output_bytes / tokens, routed) : 0;
    if (bytes > f.dispatch_bytes) f.dispatch_bytes = bytes;
  }
  return f;
}
}  // namespace detail

/// The single-GPU facts of `m` trained as `per_rank_plan` (its batch is the per-rank micro-batch).
template <std::size_t N>
constexpr step_facts rank_facts(const model<N>& m, const training& per_rank_plan, const device& dev) {
  model_budget<N> b{};
  b.records = m.records;
  const auto r = detail::simulate_step(m.records, per_rank_plan, &b.per_record);
  detail::fill_budget(b, r, per_rank_plan, dev);
  step_facts f{};
  f.single = b;
  // a frozen base in a type of its own (LoRA) stays whole on every rank, like a buffer
  f.params = {b.parameter_count - b.base_weight_count, b.trainable_count, r.totals.largest_trainable, detail::largest_unit(b)};
  if (f.params.largest_layer == 0) f.params.largest_layer = f.params.largest_unit;
  // The single GPU's peak can sit late in backward, where its whole .grad set outweighs the
  // activations already freed (Mixtral-8x7B: 93 GB of gradients, 0.6 GB of activations); a rank
  // whose gradients are sharded peaks earlier, at the end of forward: take the larger.
  const auto backward_activations = r.fwd_bwd_peak - r.grads_at_peak;
  f.activations = r.forward_peak > backward_activations ? r.forward_peak : backward_activations;
  f.forward_flops = checked_mul(subtree_flops(b, 0, shape{}, per_rank_plan, false, false).total, per_rank_plan.micro());
  f.split = detail::split_facts_of(m.records);
  f.stages = detail::stage_facts_of(b);
  detail::add_block_facts(f.stages, m.records, b, per_rank_plan, f.split.layers);
  f.experts = detail::expert_facts_of(b);
  return f;
}

/// The worst rank's budget of `m` under `l`, `per_rank_plan` being one rank's micro-batch.
template <std::size_t N>
constexpr rank_budget per_rank_budget(const model<N>& m, const training& per_rank_plan, const parallel_layout& l, const device& dev) {
  detail::validate(l);
  if (!per_rank_plan.master_weights) detail::parallel_layouts_keep_master_weights();
  return per_rank(rank_facts(m, per_rank_plan, dev), l);
}

/// Does the worst rank fit its device?
constexpr bool fits_per_rank(const rank_budget& r) { return r.total() <= r.capacity; }

// ---- require_fits_per_rank<b>: the failing rank's role and MiB in the diagnostic -------------

/// Tags that make the diagnostic read as a sentence: the rank role and the numbers.
template <std::int64_t Stage, std::int64_t Stages>
struct pipeline_stage {};
template <std::int64_t TensorRanks>
struct any_tensor_rank_of {};
template <std::int64_t DataRanks, std::int64_t ShardedOver>
struct any_data_rank_of_sharded_over {};
template <std::int64_t MiB>
struct needs_mib {};
template <std::int64_t MiB>
struct has_mib {};

/// The part of a rank budget the check needs, as a structural type.
struct rank_fit_summary {
  std::int64_t needed_mib = 0, available_mib = 0;
  std::int64_t stage = 0, stages = 1, tensor = 1, data = 1, sharded_over = 1;
  catalog_gpu id = catalog_gpu::custom;
  constexpr rank_fit_summary() = default;
  constexpr rank_fit_summary(const rank_budget& r)
      : needed_mib(to_mib_ceil(r.total())), available_mib(r.capacity / MiB), stage(r.pipeline_stage),
        stages(r.layout.pipeline_parallel), tensor(r.layout.tensor_parallel), data(r.layout.data_parallel()),
        sharded_over(r.layout.shard_degree()), id(r.device_id) {}
};

/// Instantiated with a failing rank's role and numbers, so that they appear in the diagnostic.
template <class Stage, class Tensor, class Data, class Needed, class Has, catalog_gpu Catalog, bool Fits>
struct rank_exceeds_gpu_memory {
  static_assert(Fits, "gpubudget: a rank does not fit its GPU: role, needed MiB and available MiB are the template arguments above");
  static constexpr bool value = true;
};

/// `static_assert(require_fits_per_rank<r>)`: true when the worst rank fits; otherwise a compile
/// error such as rank_exceeds_gpu_memory<pipeline_stage<0, 1>, any_tensor_rank_of<1>,
/// any_data_rank_of_sharded_over<8, 8>, needs_mib<52000>, has_mib<40335>, catalog_gpu::a100_40gb, false>.
template <rank_fit_summary S>
inline constexpr bool require_fits_per_rank =
    rank_exceeds_gpu_memory<pipeline_stage<S.stage, S.stages>, any_tensor_rank_of<S.tensor>, any_data_rank_of_sharded_over<S.data, S.sharded_over>,
                            needs_mib<S.needed_mib>, has_mib<S.available_mib>, S.id, (S.needed_mib <= S.available_mib)>::value;


// ---- Solvers ---------------------------------------------------------------------------------

/// The smallest world size (a multiple of tp · pp · cp, and of HYBRID_SHARD's group) up to
/// `max_gpus` at which every rank of `l` fits; 0 when none does. Activations do not shrink with
/// more data-parallel ranks, so a model whose micro-batch alone does not fit never fits.
constexpr std::int64_t min_gpus(const step_facts& f, parallel_layout l, std::int64_t max_gpus = 4096) {
  detail::validate(l);
  const auto step = l.model_parallel();
  for (std::int64_t n = step; n <= max_gpus; n += step) {
    l.world_size = n;
    if (l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard && l.data_parallel() % l.shard_degree() != 0) continue;
    if (fits_per_rank(per_rank(f, l))) return n;
  }
  return 0;
}

/// Weight of a host<->device byte against a GPU<->GPU byte in `step_cost`: NVLink 3 moves
/// 600 GB/s per A100, PCIe 4.0 x16 64 GB/s (NVIDIA A100 datasheet), about 10 to 1.
inline constexpr std::int64_t offload_byte_weight = 10;

/// FLOPs an A100 computes in the time NVLink moves one byte: 312 TFLOPS of dense BF16 tensor
/// math against 600 GB/s (NVIDIA A100 datasheet), 520. Converts the pipeline bubble's idle
/// compute into fabric bytes, the unit of `step_cost`.
inline constexpr std::int64_t flops_per_fabric_byte = 520;

/// The explicit cost of data parallelism and offload: bytes one rank sends per optimizer step
/// over the GPU fabric, plus offload traffic weighted by `offload_byte_weight`. Communication
/// (Rajbhandari et al. 2020, "ZeRO", §7: Ψ = the rank's 16-bit parameters): DDP's all-reduce and
/// ZeRO-1/2's reduce-scatter + all-gather move 2Ψ, ZeRO-3 3Ψ (parameters gathered in forward and
/// again in backward); FSDP FULL_SHARD 3Ψ, SHARD_GRAD_OP 2Ψ, NO_SHARD 2Ψ, HYBRID_SHARD 3Ψ in its
/// group + 2Ψ/g across groups; nothing with one data-parallel rank. Offload: gradients down and
/// updated parameters up per step (optimizer offload), parameters up in forward and again in
/// backward (parameter offload).
constexpr std::int64_t step_cost(const rank_budget& r) {
  const auto& l = r.layout;
  const auto psi = checked_mul(r.params.total, 2), n = l.shard_degree();
  std::int64_t comm = 2 * psi;
  if ((l.engine == sharding::zero && l.zero_stage == 3) ||
      (l.engine == sharding::fsdp && (l.fsdp == fsdp_strategy::full_shard || l.fsdp == fsdp_strategy::hybrid_shard)))
    comm = 3 * psi;
  if (l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard) comm += 2 * psi / n;
  if (l.data_parallel() <= 1) comm = 0;
  std::int64_t host = 0;
  if (l.offload.optimizer || (l.engine == sharding::fsdp && l.offload.parameters)) host += 2 * detail::shard(psi, n);
  if (l.offload.parameters) host += 2 * detail::shard(psi, n);
  return comm + checked_mul(host, offload_byte_weight);
}

namespace detail {
/// Micro-batches per step a pipeline runs: as given, else as many as stages (the fewest that
/// fill a 1F1B pipeline).
constexpr std::int64_t pipeline_micro_batches(const parallel_layout& l) {
  return l.micro_batches > 0 ? l.micro_batches : l.pipeline_parallel;
}

/// The pipeline bubble in fabric bytes: p − 1 micro-batches' forward and backward (2 × forward)
/// of idle time per step on every stage, a bubble fraction of (p − 1)/m of the ideal step
/// (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
/// Using Megatron-LM", §2.2.1), converted at `flops_per_fabric_byte`.
constexpr std::int64_t pipeline_bubble_cost(const step_facts& f, const parallel_layout& l) {
  if (l.pipeline_parallel <= 1) return 0;
  const auto per_stage = shard(checked_mul(3, f.forward_flops), l.tensor_parallel * l.pipeline_parallel * l.context_parallel);
  return checked_mul(l.pipeline_parallel - 1, per_stage) / flops_per_fabric_byte;
}

/// Tensor and pipeline parallelism's traffic per step and rank, for m micro-batches of one block
/// output (b·s·h 16-bit elements, x): each layer all-reduces x twice in forward and twice in
/// backward (Shoeybi et al. 2019, "Megatron-LM", §3), a ring moving 2(t − 1)/t of it: 8·x·(t −
/// 1)/t per layer and micro-batch (Narayanan et al. 2021, §3.2; sequence parallelism's all-gather
/// + reduce-scatter move the same, Korthikanti et al. 2022 §4.2.2); a pipeline stage sends x
/// forward and its gradient back per micro-batch, split over the tensor ranks (ibid. §4.1,
/// scatter/gather). Plus the bubble.
constexpr std::int64_t model_parallel_cost(const step_facts& f, const parallel_layout& l) {
  const auto t = l.tensor_parallel, p = l.pipeline_parallel, m = pipeline_micro_batches(l);
  const auto x = shard(f.stages.block_output_bytes, l.context_parallel);
  std::int64_t bytes = 0;
  if (t > 1) bytes += checked_mul(checked_mul(m, shard(f.split.layers, p)), checked_mul(8 * (t - 1), x) / t);
  if (p > 1) bytes += checked_mul(m, 2 * shard(x, t));
  return bytes + pipeline_bubble_cost(f, l);
}
}  // namespace detail

/// The cost by which layouts are ranked: `step_cost(r)` (data-parallel traffic and offload) plus
/// tensor / pipeline traffic and the pipeline bubble (detail::model_parallel_cost), in bytes.
constexpr std::int64_t step_cost(const step_facts& f, const rank_budget& r) {
  return step_cost(r) + detail::model_parallel_cost(f, r.layout);
}

/// A candidate layout with its worst rank's budget and cost.
struct ranked_layout {
  parallel_layout layout{};
  rank_budget budget{};
  std::int64_t cost = 0;
  bool fits = false;
  bool valid = false;  ///< the layout exists for this world size (HYBRID_SHARD needs several groups)
};

/// Engines × offload choices of one model-parallel layout: DDP; ZeRO 1-3; FSDP NO_SHARD,
/// SHARD_GRAD_OP, FULL_SHARD, HYBRID_SHARD (groups of 8, one node) × no offload, optimizer
/// offload (ZeRO), parameter + optimizer offload (ZeRO-3, FSDP's CPUOffload). A ranking keeps
/// this many of its best layouts.
inline constexpr std::size_t layout_candidates = 8 * 3;

/// What the ranking varies besides the engine and offload: tensor-parallel sizes that divide the
/// heads and linear widths (split_facts::tp_divides) up to one node's GPUs (Narayanan et al.
/// 2021, takeaway #1: tensor parallelism inside a node, over NVLink), with sequence parallelism;
/// pipeline sizes that divide the layer count; their product dividing the world size.
struct layout_search {
  std::int64_t gpus_per_node = 8;
  std::int64_t micro_batches = 0;  ///< per step, for the pipeline (0: as many as stages)
};

namespace detail {
/// Candidate `engine` (0 DDP, 1-3 ZeRO stage, 4-7 FSDP strategy) with `offload` (0 none,
/// 1 optimizer, 2 optimizer and parameters) on `world` GPUs, the model-parallel sizes taken from
/// `base`; `valid` false where the engines do not offer the combination.
constexpr ranked_layout candidate_layout(int engine, int offload, std::int64_t world, const parallel_layout& base) {
  constexpr fsdp_strategy strategies[] = {fsdp_strategy::no_shard, fsdp_strategy::shard_grad_op, fsdp_strategy::full_shard, fsdp_strategy::hybrid_shard};
  const offload_policy o{offload >= 1, offload == 2};
  ranked_layout c{};
  c.layout = engine == 0 ? ddp(world) : engine <= 3 ? zero(engine, world, o) : fsdp(strategies[engine - 4], world, o, engine == 7 ? 8 : 0);
  c.layout.tensor_parallel = base.tensor_parallel, c.layout.pipeline_parallel = base.pipeline_parallel;
  c.layout.context_parallel = base.context_parallel, c.layout.expert_parallel = base.expert_parallel;
  c.layout.sequence_parallel = base.sequence_parallel, c.layout.virtual_pipeline = base.virtual_pipeline;
  c.layout.micro_batches = base.micro_batches;
  const bool zero_offload = engine >= 1 && engine <= 3 && (offload == 1 || (offload == 2 && engine == 3));
  const bool fsdp_offload = engine >= 5 && offload == 2;  // CPUOffload: not with NO_SHARD
  const auto dp = world / base.model_parallel();
  c.valid = (offload == 0 || zero_offload || fsdp_offload) && world % base.model_parallel() == 0 && dp % base.expert_parallel == 0 &&
            !(engine == 7 && (dp <= 8 || dp % 8 != 0));
  return c;
}

/// Fitting layouts first, each group by cost, then by the rank's total.
constexpr bool ranks_before(const ranked_layout& a, const ranked_layout& b) {
  if (a.valid != b.valid) return a.valid;
  if (a.fits != b.fits) return a.fits;
  if (a.cost != b.cost) return a.cost < b.cost;
  return a.budget.total() < b.budget.total();
}

using ranking = std::array<ranked_layout, layout_candidates>;

/// Budgets a valid candidate and inserts it into the sorted `out` (stable: ties keep the earlier
/// candidate first), dropping what falls off the end.
constexpr void rank_candidate(ranking& out, const step_facts& f, ranked_layout c) {
  if (!c.valid) return;
  c.budget = per_rank(f, c.layout);
  c.cost = step_cost(f, c.budget);
  c.fits = fits_per_rank(c.budget);
  if (!ranks_before(c, out.back())) return;
  auto j = out.size() - 1;
  out[j] = c;
  for (; j > 0 && ranks_before(out[j], out[j - 1]); --j) {
    const auto t = out[j];
    out[j] = out[j - 1], out[j - 1] = t;
  }
}

/// The sizes from 1 to `most` that divide `n` (any size when n is 0) and `world`.
struct size_choices {
  std::array<std::int64_t, 64> at{};
  int count = 0;
};
constexpr size_choices divisors_within(std::int64_t n, std::int64_t most, std::int64_t world) {
  size_choices c{};
  for (std::int64_t d = 1; d <= most && c.count < 64; ++d)
    if ((n == 0 || n % d == 0) && world % d == 0) c.at[static_cast<std::size_t>(c.count++)] = d;
  return c;
}
}  // namespace detail

/// Every data-parallel layout on `world` GPUs with `base`'s tensor / pipeline / context / expert
/// sizes, enumerated over the engine and offload dimensions as the planner enumerates its
/// remedies (detail::for_each_combination); the valid ones with their worst rank's budget and
/// step_cost, fitting ones first, each group by cost (then by total); invalid entries last.
constexpr detail::ranking rank_layouts(const step_facts& f, std::int64_t world, const parallel_layout& base) {
  detail::ranking out{};
  detail::for_each_combination(std::array<int, 2>{7, 2}, [&](const std::array<int, 2>& c) {
    detail::rank_candidate(out, f, detail::candidate_layout(c[0], c[1], world, base));
  });
  return out;
}

/// The best `layout_candidates` layouts on `world` GPUs over tensor-parallel × pipeline sizes
/// (layout_search) × engines × offload, ranked as above by step_cost(f, r): data-parallel and
/// offload traffic, tensor-parallel all-reduces, pipeline sends and the pipeline bubble.
constexpr detail::ranking rank_layouts(const step_facts& f, std::int64_t world, const layout_search& s = {}) {
  const auto tps = detail::divisors_within(f.split.tp_divides, s.gpus_per_node < world ? s.gpus_per_node : world, world);
  const auto pps = detail::divisors_within(f.split.layers, f.split.layers > 0 ? f.split.layers : 1, world);
  detail::ranking out{};
  detail::for_each_combination(std::array<int, 4>{tps.count - 1, pps.count - 1, 7, 2}, [&](const std::array<int, 4>& c) {
    parallel_layout base{};
    base.tensor_parallel = tps.at[static_cast<std::size_t>(c[0])], base.pipeline_parallel = pps.at[static_cast<std::size_t>(c[1])];
    base.sequence_parallel = base.tensor_parallel > 1, base.micro_batches = s.micro_batches;
    if (world % base.model_parallel() == 0) detail::rank_candidate(out, f, detail::candidate_layout(c[2], c[3], world, base));
  });
  return out;
}

/// The cheapest layout on `world` GPUs (over TP × PP × engines × offload) for which every rank
/// fits; a named error if none does.
constexpr parallel_layout cheapest_layout(const step_facts& f, std::int64_t world, const layout_search& s = {}) {
  const auto r = rank_layouts(f, world, s);
  if (!r[0].fits) detail::no_layout_fits();
  return r[0].layout;
}
/// The cheapest layout on `world` GPUs with `base`'s model-parallel sizes.
constexpr parallel_layout cheapest_layout(const step_facts& f, std::int64_t world, const parallel_layout& base) {
  const auto r = rank_layouts(f, world, base);
  if (!r[0].fits) detail::no_layout_fits();
  return r[0].layout;
}

// ---- Megatron's closed forms, for checking the op-level model ------------------------------

/// Activation bytes per transformer layer (Korthikanti et al. 2022, Table 2; 16-bit activations,
/// 1-byte dropout masks): s·b·h·(34 + 5·a·s/h) with no parallelism; s·b·h·(10 + 24/t + 5·a·s/(h·t))
/// with tensor parallelism; s·b·h/t·(34 + 5·a·s/h) with tensor + sequence parallelism;
/// 34·s·b·h/t with sequence parallelism and selective recomputation (attention scores recomputed).
constexpr std::int64_t megatron_layer_activation_bytes(std::int64_t s, std::int64_t b, std::int64_t h, std::int64_t a, std::int64_t t,
                                                       bool sequence_parallel, bool selective_recompute) {
  const auto sbh = checked_mul(checked_mul(s, b), h);
  const auto scores = selective_recompute ? 0 : checked_mul(5 * a, checked_mul(s, checked_mul(s, b)));  // 5·a·s²·b
  if (sequence_parallel || t == 1) return (checked_mul(34, sbh) + scores) / t;
  return checked_mul(10, sbh) + (checked_mul(24, sbh) + scores) / t;
}

/// The inputs of Megatron-LM's megatron/training/theoretical_memory_usage.py (its argument names;
/// dense GPT / Llama models, bf16, Adam), for reproducing its figures.
struct megatron_args {
  std::int64_t seq_length = 2048, micro_batch_size = 1, hidden_size = 0, ffn_hidden_size = 0, num_layers = 0;
  std::int64_t num_attention_heads = 0, num_query_groups = 0;  ///< 0: no group-query attention
  std::int64_t padded_vocab_size = 0;
  bool swiglu = false, untie_embeddings_and_output_weights = false, rms_norm = false;
  std::int64_t tensor_model_parallel_size = 1, pipeline_model_parallel_size = 1, data_parallel_size = 1;
  std::int64_t virtual_pipeline_model_parallel_size = 0;  ///< 0: None (plain 1F1B)
  std::int64_t num_microbatches = 0;                      ///< 0: None
  bool sequence_parallel = false, selective_recompute = false, use_distributed_optimizer = false;
};

/// compute_weight_and_optimizer_memory: the most loaded shard's parameters (its transformer
/// layers / pp + the embedding, / tp, the norms replicated; the untied output layer too when
/// pp = 1) × 18 bytes, or 6 + 12/dp with the distributed optimizer.
constexpr double megatron_weight_and_optimizer_bytes(const megatron_args& a) {
  const double h = static_cast<double>(a.hidden_size), groups = static_cast<double>(a.num_query_groups > 0 ? a.num_query_groups : a.num_attention_heads);
  const double attention = 2 * h * h * (1 + groups / static_cast<double>(a.num_attention_heads));
  const double mlp = 2 * h * static_cast<double>(a.ffn_hidden_size) * (a.swiglu ? 1.5 : 1.0);
  const double norm = a.rms_norm ? 1 : 2;
  const double layers = static_cast<double>(a.num_layers), pp = static_cast<double>(a.pipeline_model_parallel_size),
               tp = static_cast<double>(a.tensor_model_parallel_size);
  const double embedding = h * static_cast<double>(a.padded_vocab_size);
  double tp_sharded = ((attention + mlp) * layers / pp + embedding) / tp;
  const double replicated = (2 * h * norm * layers + norm * h) / pp;
  if (a.untie_embeddings_and_output_weights && a.pipeline_model_parallel_size == 1) tp_sharded += embedding / tp;
  const double bytes = a.use_distributed_optimizer ? 6 + 12 / static_cast<double>(a.data_parallel_size) : 18;
  return (tp_sharded + replicated) * bytes;
}

/// compute_activation_memory (sequence parallel with selective recomputation: 34·s·b·h per layer
/// for a 4h FFN, Korthikanti et al. Table 2) or compute_activation_memory_without_sp
/// (s·b·h·(10 + 24/t) per layer, × 1.05 for temporaries): the first pipeline stage, pp
/// micro-batches in flight × the interleaved penalty (or × min(1, m/pp)), the output layer and
/// loss only when pp = 1.
constexpr double megatron_activation_bytes(const megatron_args& a) {
  const double s = static_cast<double>(a.seq_length), b = static_cast<double>(a.micro_batch_size), h = static_cast<double>(a.hidden_size);
  const double p = static_cast<double>(a.pipeline_model_parallel_size), t = static_cast<double>(a.tensor_model_parallel_size);
  const double v = static_cast<double>(a.virtual_pipeline_model_parallel_size), V = static_cast<double>(a.padded_vocab_size);
  const bool with_sp = a.sequence_parallel && a.selective_recompute;
  double m = s * b * h * (with_sp ? 18 + 4 * (static_cast<double>(a.ffn_hidden_size) / h) : 10 + 24 / t) * static_cast<double>(a.num_layers);
  m += 8 * s * b * p + s * b * h * p;  // embedding input and dropout mask, pp micro-batches in flight
  if (a.virtual_pipeline_model_parallel_size > 0) m *= 1 + (p - 1) / (p * v);
  else if (a.pipeline_model_parallel_size > 1 && a.num_microbatches > 0 && static_cast<double>(a.num_microbatches) < p)
    m *= static_cast<double>(a.num_microbatches) / p;
  if (with_sp) {
    if (a.pipeline_model_parallel_size == 1) m += s * b * h * 4 * (1 + V / h);  // output layer input and loss
    return m / t;
  }
  if (a.pipeline_model_parallel_size == 1) m += (s * b * V / t + s * b * h) * 2;  // logits, final norm output
  return m * 1.05;
}

// ---- DeepSpeed's own estimators, for pinning ------------------------------------------------

/// estimate_zero2_model_states_mem_needs (deepspeed/runtime/zero/stage_1_and_2.py), GPU bytes, as
/// DeepSpeed computes it since PR #5099 (June 2024): `2 * total_params + int(18 * total_params /
/// total_gpus)` ("2 = params_16bit, 18 = 2_grads_16bit + 4_grads_32bit + 4_params_32bit +
/// 8_optimizer_states_32bit"), with cpu_offload `2 * total_params`.
constexpr std::int64_t deepspeed_zero2_gpu_bytes(std::int64_t total_params, std::int64_t gpus, bool cpu_offload) {
  return cpu_offload ? 2 * total_params : 2 * total_params + 18 * total_params / gpus;
}
/// The same estimator from its introduction (DeepSpeed PR #965, 2021) until PR #5099: `4 *
/// total_params + int(16 * total_params / total_gpus)`, the figures DeepSpeed's docs print
/// (docs/code-docs/source/memory.rst: T5-3B on 8 GPUs, 15.93 GB per GPU).
constexpr std::int64_t deepspeed_zero2_gpu_bytes_before_5099(std::int64_t total_params, std::int64_t gpus, bool cpu_offload) {
  return cpu_offload ? 2 * total_params : 4 * total_params + 16 * total_params / gpus;
}
/// estimate_zero3_model_states_mem_needs (deepspeed/runtime/zero/stage3.py), GPU bytes.
constexpr std::int64_t deepspeed_zero3_gpu_bytes(std::int64_t total_params, std::int64_t largest_layer_params, std::int64_t gpus,
                                                 bool cpu_offload, bool cpu_offload_params) {
  const auto largest = 4 * largest_layer_params;
  if (cpu_offload && cpu_offload_params) return largest;
  return cpu_offload ? largest + 2 * total_params / gpus : largest + 18 * total_params / gpus;
}


// ---- Tables ----------------------------------------------------------------------------------

/// A rank budget with its column title.
struct labelled_rank {
  std::string label;
  rank_budget budget{};
};

/// Markdown: one column per rank budget, one row per component, then the device total, the model
/// states (DeepSpeed's estimator figure), what went to the host, and whether the rank fits.
inline std::string rank_comparison_table(const std::vector<labelled_rank>& cols) {
  if (cols.empty()) return {};
  std::string out = "| Per rank |";
  for (const auto& c : cols) out += " " + c.label + " |";
  out += "\n|---|";
  for (std::size_t i = 0; i < cols.size(); ++i) out += "---:|";
  out += "\n";
  auto row = [&](const std::string& name, auto get) {
    out += "| " + name + " |";
    for (const auto& c : cols) out += " " + get(c.budget) + " |";
    out += "\n";
  };
  for (std::size_t k = 0; k < rank_components(cols.front().budget).size(); ++k) {
    bool any = false;
    for (const auto& c : cols) any = any || rank_components(c.budget)[k].bytes != 0 || rank_components(c.budget)[k].always_shown;
    if (any) row(std::string(rank_components(cols.front().budget)[k].label), [k](const rank_budget& r) { return format_bytes(rank_components(r)[k].bytes); });
  }
  row("Device total", [](const rank_budget& r) { return "**" + format_bytes(r.total()) + "**"; });
  row("Model states (DeepSpeed's terms)", [](const rank_budget& r) { return format_bytes(r.model_states()); });
  row("Offloaded to host (per rank)", [](const rank_budget& r) { return format_bytes(r.host_model_states); });
  row("Capacity", [](const rank_budget& r) { return format_bytes(r.capacity); });
  row("Fits", [](const rank_budget& r) { return std::string(fits_per_rank(r) ? "yes" : "**no**"); });
  return out;
}

}  // namespace gpubudget
