// gpubudget/distributed.hpp — per-rank budgets when one model is trained on many GPUs with
// DeepSpeed ZeRO, PyTorch FSDP, plain DDP, and Megatron-style tensor / sequence / pipeline
// parallelism.
//
//   training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};  // per-rank micro-batch
//   constexpr auto r = per_rank_budget(llama(llama2_7b(2048)), per_gpu, zero(3, 8), devices::a100_40gb);
//   static_assert(require_fits_per_rank<r>);   // names the failing rank and its MiB
//   constexpr auto f = rank_facts(model, per_gpu, devices::a100_40gb);
//   min_gpus(f, zero(3, 1));                    // smallest world size at which every rank fits
//   cheapest_layout(f, 8);                      // ZeRO stage / FSDP strategy / offload, by cost
//
// What a rank holds:
//  * model states (parameters, gradients, optimizer state) as the engine shards and stores them,
//    plus the unsharded working copies it gathers (ZeRO-3's largest layer, FSDP's units);
//  * communication buffers (ZeRO reduce buckets and prefetch window, NCCL's channel buffers);
//  * activations and temporaries of its own micro-batch: the single-GPU liveness walk of the
//    per-rank plan (`training::batch` is the per-rank micro-batch, DeepSpeed's
//    train_micro_batch_size_per_gpu), split by tensor / sequence / context parallelism;
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
#include <gpubudget/detail/diagnostics.hpp>
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
  /// Count as DeepSpeed's estimators do: they give ZeRO-2 the whole 16-bit gradients (`4 *
  /// total_params` for parameters + gradients, as for ZeRO-1). At run time ZeRO-2 reduces each
  /// gradient into its bucket as backward produces it and keeps only its partition
  /// (stage_1_and_2.py, partition_gradients), which is what gpubudget counts by default.
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
  offload_policy offload{};
  std::int64_t tensor_parallel = 1, pipeline_parallel = 1, context_parallel = 1;
  /// Expert parallel size: a hook. Expert (MoE) layers are not modelled yet, so it changes nothing.
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

/// What one single-GPU walk of the per-rank plan gives every layout: computed once, then every
/// layout and world size is arithmetic (min_gpus, cheapest_layout).
struct step_facts {
  memory_budget single{};          ///< the single-GPU budget of the per-rank plan
  parameter_facts params{};
  std::int64_t activations = 0;    ///< forward/backward peak minus the .grad tensors then alive
  split_facts split{};
};

/// One rank's budget. Components (rank_components) add up to total().
struct rank_budget {
  parallel_layout layout{};
  training plan{};
  std::string_view device_name{};
  catalog_gpu device_id = catalog_gpu::custom;
  std::int64_t capacity = 0;
  parameter_facts params{};
  std::int64_t pipeline_stage = 0;  ///< the worst rank's stage (0: the first holds the most in flight)

  // Model states on this rank's GPU, as DeepSpeed's estimators count them.
  std::int64_t parameters = 0, gradients = 0, optimizer_state = 0;
  std::int64_t gathered_parameters = 0;  ///< unsharded working copies (ZeRO-3 largest layer, FSDP units)
  // Buffers.
  std::int64_t comm_buckets = 0;  ///< ZeRO reduce buckets, ZeRO-3 prefetch, DDP's gradient buckets
  std::int64_t nccl_buffers = 0;
  // Per micro-batch, from the single-GPU walk.
  std::int64_t step_peak = 0;  ///< activations, or the optimizer step's temporaries when larger
  std::int64_t buffers = 0, input_batch = 0;
  std::int64_t cuda_context = 0, workspace = 0, allocator_rounding = 0, fragmentation = 0;
  std::int64_t host_model_states = 0;  ///< offloaded to the CPU (per rank), not on the GPU

  /// Parameters + gradients + optimizer state (+ gathered copies): DeepSpeed's estimator figure.
  constexpr std::int64_t model_states() const { return parameters + gradients + optimizer_state + gathered_parameters; }
  constexpr std::int64_t tensor_bytes() const { return model_states() + comm_buckets + step_peak + buffers + input_batch; }
  constexpr std::int64_t total() const {
    return tensor_bytes() + nccl_buffers + cuda_context + workspace + allocator_rounding + fragmentation;
  }
  constexpr std::int64_t headroom() const { return capacity - total(); }
};

/// The lines of a rank's budget, in table order; they add up to r.total().
constexpr std::array<budget_component, 13> rank_components(const rank_budget& r) {
  using k = component_kind;
  return {{{"parameters", "Parameters (this rank)", r.parameters, k::resident, true},
           {"gradients", "Gradients (this rank)", r.gradients, k::resident, true},
           {"optimizer_state", "Optimizer state + fp32 master (this rank)", r.optimizer_state, k::resident, true},
           {"gathered_parameters", "Gathered (unsharded) parameters", r.gathered_parameters, k::step, false},
           {"comm_buckets", "Reduce / prefetch buckets", r.comm_buckets, k::step, false},
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
}

/// Tensor parallelism must divide the heads and the FFN; pipeline stages need a layer each.
constexpr void validate_split(const split_facts& s, const parallel_layout& l) {
  if (s.tp_divides > 0 && s.tp_divides % l.tensor_parallel != 0) tensor_parallel_does_not_divide_heads();
  if (s.layers > 0 && l.pipeline_parallel > s.layers) pipeline_parallel_larger_than_layer_count();
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
  return {pb, pb, 4 * optimizer_state_per_param(p.optimizer) + (t.pure16 ? 8 : 0)};
}

/// DeepSpeed ZeRO, matching (with `estimator_accounting`) estimate_zero2_model_states_mem_needs (stages 1-2: GPU
/// `4 * total_params + int(16 * total_params / total_gpus)`, with cpu_offload `2 * total_params`)
/// and estimate_zero3_model_states_mem_needs (stage 3: `4 * largest_layer_params +
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

/// PyTorch FSDP: flat parameters sharded in full precision (MixedPrecision keeps "the sharded
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
  const auto opt = shard(checked_mul(f.trainable, 4 * optimizer_state_per_param(p.optimizer)), n);
  if (l.offload.parameters) s.host = params + grads + opt;
  else s.params = params, s.grads = grads, s.opt = opt;
  const auto unit = checked_mul(f.largest_unit, cb);
  switch (l.fsdp) {
    case fsdp_strategy::full_shard:
    case fsdp_strategy::hybrid_shard: s.gathered = 3 * unit; break;
    case fsdp_strategy::shard_grad_op: s.gathered = checked_mul(f.total, cb) + unit; break;
    case fsdp_strategy::no_shard: s.gathered = cb == 2 ? checked_mul(f.total, cb) : 0; break;
  }
  return s;
}

/// Megatron-LM: 16-bit parameters, fp32 main gradients (4 bytes), fp32 master weights and Adam's
/// two moments (12 bytes), the latter sharded with the distributed optimizer: 18 bytes per
/// parameter, or 6 + 12/dp (megatron/training/theoretical_memory_usage.py,
/// compute_weight_and_optimizer_memory: `18 if not args.use_distributed_optimizer else 6 + (12 /
/// args.data_parallel_size)`). Frozen parameters keep their 16-bit weights only.
constexpr rank_states megatron_states(const parameter_facts& f, const training& p, const parallel_layout& l) {
  const auto t = types_of(p.precision);
  const auto opt = checked_mul(f.trainable, 4 * optimizer_state_per_param(p.optimizer) + (t.pure16 ? 4 : 0));
  return {bytes_of(f.total, t.parameters), checked_mul(f.trainable, 4), shard(opt, l.shard_degree()), 0, 0};
}

/// DDP / one GPU: what the single-GPU budget holds (parameters, .grad, master weights for
/// pure 16-bit, optimizer state).
constexpr rank_states replicated_states(const parameter_facts& f, const training& p) {
  const auto t = types_of(p.precision);
  const auto opt = checked_mul(f.trainable, 4 * optimizer_state_per_param(p.optimizer) + (t.pure16 ? 4 : 0));
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
/// uses (data parallel, and tensor / pipeline / context groups when larger than 1).
constexpr std::int64_t nccl_bytes(const parallel_layout& l) {
  const std::int64_t groups = (l.data_parallel() > 1) + (l.tensor_parallel > 1) + (l.pipeline_parallel > 1) + (l.context_parallel > 1);
  return checked_mul(groups * 2 * l.nccl.channels, l.nccl.buffsize);
}

/// The parameters the most loaded rank's model-parallel slice holds: Megatron splits every linear
/// weight and the vocabulary over the tensor ranks (norms, a small part, are replicated: left
/// out) and the layers over the pipeline stages; the first stage also holds the input embedding
/// (taken to be the largest parameter tensor, as in language models): "(1/pp_size transformer
/// layers + 1 embedding layer) / tp_size" (theoretical_memory_usage.py, most loaded shard).
/// Expert parallelism is a hook (no expert layers yet).
constexpr std::int64_t first_stage_share(std::int64_t count, std::int64_t embedding, std::int64_t pp) {
  if (pp == 1 || count <= embedding) return count;
  return shard(count - embedding, pp) + embedding;
}
constexpr parameter_facts model_parallel_slice(parameter_facts f, const parallel_layout& l) {
  const auto tp = l.tensor_parallel, pp = l.pipeline_parallel;
  const auto frozen = f.total - f.trainable;
  f.total = shard(first_stage_share(f.total, f.largest_layer, pp), tp);
  f.trainable = f.total - shard(frozen / pp, tp);  // frozen parameters: spread evenly
  if (f.trainable < 0) f.trainable = 0;
  f.largest_layer = shard(f.largest_layer, tp), f.largest_unit = shard(f.largest_unit, tp);
  return f;
}

/// Activations of one rank from the single-GPU walk (Korthikanti et al. 2022, "Reducing
/// Activation Recomputation in Large Transformer Models", Table 2): per layer
/// s·b·h·(34 + 5·a·s/h) without parallelism; tensor parallel alone leaves the 10·s·b·h of the
/// norms and dropouts unsplit (10 + 24/t, the attention-score term /t too: with flash attention,
/// which keeps no a·s² scores, the factor is (10 + 24/t)/34); tensor + sequence parallel divide
/// all of it by t; context parallel splits the sequence (/cp). Pipeline 1F1B: the first stage keeps
/// pp micro-batches of L/pp layers in flight, the activations of all L layers for one micro-batch
/// (ibid. §4.2.3), so the single-GPU figure stands for stage 0.
/// Interleaved schedules multiply stage 0's activations by 1 + (p − 1)/(p·v); fewer
/// micro-batches than stages (plain 1F1B) by m/p (Megatron-LM theoretical_memory_usage.py,
/// compute_activation_memory: interleaved_schedule_memory_penalty, min(1, num_microbatches / pp)).
constexpr std::int64_t rank_activations(std::int64_t single, const parallel_layout& l) {
  const auto t = l.tensor_parallel, p = l.pipeline_parallel, v = l.virtual_pipeline;
  std::int64_t a = single;
  if (p > 1 && v > 1) a = shard(checked_mul(a, p * v + p - 1), p * v);
  else if (p > 1 && l.micro_batches > 0 && l.micro_batches < p) a = shard(checked_mul(a, l.micro_batches), p);
  if (t > 1) a = l.sequence_parallel ? shard(a, t) : shard(checked_mul(a, 10 * t + 24), 34 * t);
  return shard(a, l.context_parallel);
}

/// Optimizer temporaries of the shard this rank steps (DeepSpeed's fused / CPU Adam: none).
constexpr std::int64_t rank_optimizer_temporaries(const parameter_facts& slice, const parallel_layout& l, const training& p) {
  if (p.inference || l.engine == sharding::zero || l.offload.optimizer || l.offload.parameters) return 0;
  return optimizer_temporaries(p, slice.largest_layer, shard(slice.trainable, l.shard_degree()), dtype::fp32);
}

}  // namespace detail

/// One rank's budget under layout `l`, from the single-GPU facts of the per-rank plan.
constexpr rank_budget per_rank(const step_facts& f, const parallel_layout& l) {
  detail::validate(l);
  detail::validate_split(f.split, l);
  const auto& b = f.single;
  rank_budget r{};
  r.layout = l, r.plan = b.plan, r.device_name = b.device_name, r.device_id = b.device_id, r.capacity = b.capacity;
  r.params = detail::model_parallel_slice(f.params, l);
  const auto s = detail::states_of(r.params, b.plan, l);
  r.parameters = s.params, r.gradients = s.grads, r.optimizer_state = s.opt, r.gathered_parameters = s.gathered;
  r.host_model_states = s.host;
  r.comm_buckets = detail::comm_bucket_bytes(r.params, b.plan, l);
  r.nccl_buffers = detail::nccl_bytes(l);
  const auto act = detail::rank_activations(f.activations, l);
  const auto temps = detail::rank_optimizer_temporaries(r.params, l, b.plan);
  r.step_peak = act > temps ? act : temps;
  r.buffers = b.buffers, r.input_batch = b.input_batch;
  r.cuda_context = b.cuda_context, r.workspace = b.workspace(), r.allocator_rounding = b.allocator_rounding;
  r.fragmentation = checked_mul(r.tensor_bytes() + r.allocator_rounding, b.plan.fragmentation_percent) / 100;
  return r;
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
  f.params = {b.parameter_count, b.trainable_count, r.totals.largest_trainable, detail::largest_unit(b)};
  if (f.params.largest_layer == 0) f.params.largest_layer = f.params.largest_unit;
  f.activations = r.fwd_bwd_peak - r.grads_at_peak;
  f.split = detail::split_facts_of(m.records);
  return f;
}

/// The worst rank's budget of `m` under `l`, `per_rank_plan` being one rank's micro-batch.
template <std::size_t N>
constexpr rank_budget per_rank_budget(const model<N>& m, const training& per_rank_plan, const parallel_layout& l, const device& dev) {
  detail::validate(l);
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

/// The explicit cost by which layouts are ranked: bytes one rank sends per optimizer step over
/// the GPU fabric, plus offload traffic weighted by `offload_byte_weight`. Communication
/// (Rajbhandari et al. 2020, "ZeRO", §7: Ψ = the 16-bit model size): DDP's all-reduce and
/// ZeRO-1/2's reduce-scatter + all-gather move 2Ψ, ZeRO-3 3Ψ (parameters gathered in forward and
/// again in backward); FSDP FULL_SHARD 3Ψ, SHARD_GRAD_OP 2Ψ, NO_SHARD 2Ψ, HYBRID_SHARD 3Ψ in its
/// group + 2Ψ/g across groups. Offload: gradients down and updated parameters up per step
/// (optimizer offload), parameters up in forward and again in backward (parameter offload).
constexpr std::int64_t step_cost(const rank_budget& r) {
  const auto& l = r.layout;
  if (l.world_size <= 1) return 0;
  const auto psi = checked_mul(r.params.total, 2), n = l.shard_degree();
  std::int64_t comm = 2 * psi;
  if ((l.engine == sharding::zero && l.zero_stage == 3) ||
      (l.engine == sharding::fsdp && (l.fsdp == fsdp_strategy::full_shard || l.fsdp == fsdp_strategy::hybrid_shard)))
    comm = 3 * psi;
  if (l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard) comm += 2 * psi / n;
  std::int64_t host = 0;
  if (l.offload.optimizer || (l.engine == sharding::fsdp && l.offload.parameters)) host += 2 * detail::shard(psi, n);
  if (l.offload.parameters) host += 2 * detail::shard(psi, n);
  return comm + checked_mul(host, offload_byte_weight);
}

/// A candidate layout with its worst rank's budget and cost.
struct ranked_layout {
  parallel_layout layout{};
  rank_budget budget{};
  std::int64_t cost = 0;
  bool fits = false;
  bool valid = false;  ///< the layout exists for this world size (HYBRID_SHARD needs several groups)
};

inline constexpr std::size_t layout_candidates = 12;

/// Every data-parallel layout the solver considers on `world` GPUs: DDP, ZeRO 1-3 with and
/// without offload, FSDP's four strategies (HYBRID_SHARD with groups of 8, one node) and FSDP
/// with CPU offload.
constexpr std::array<parallel_layout, layout_candidates> candidate_layouts(std::int64_t world) {
  const offload_policy opt{true, false}, both{true, true};
  return {{ddp(world), zero(1, world), zero(2, world), zero(2, world, opt), zero(3, world), zero(3, world, opt),
           zero(3, world, both), fsdp(fsdp_strategy::no_shard, world), fsdp(fsdp_strategy::shard_grad_op, world),
           fsdp(fsdp_strategy::full_shard, world), fsdp(fsdp_strategy::hybrid_shard, world, {}, 8),
           fsdp(fsdp_strategy::full_shard, world, both)}};
}

/// The candidates on `world` GPUs, fitting ones first, each group by cost (then by total).
constexpr std::array<ranked_layout, layout_candidates> rank_layouts(const step_facts& f, std::int64_t world) {
  std::array<ranked_layout, layout_candidates> out{};
  const auto c = candidate_layouts(world);
  for (std::size_t i = 0; i < c.size(); ++i) {
    out[i].layout = c[i];
    out[i].valid = !(c[i].engine == sharding::fsdp && c[i].fsdp == fsdp_strategy::hybrid_shard && (world <= 8 || world % 8 != 0));
    if (!out[i].valid) continue;
    out[i].budget = per_rank(f, c[i]);
    out[i].cost = step_cost(out[i].budget);
    out[i].fits = fits_per_rank(out[i].budget);
  }
  auto before = [](const ranked_layout& a, const ranked_layout& b) {
    if (a.valid != b.valid) return a.valid;
    if (a.fits != b.fits) return a.fits;
    if (a.cost != b.cost) return a.cost < b.cost;
    return a.budget.total() < b.budget.total();
  };
  for (std::size_t i = 1; i < out.size(); ++i)  // insertion sort: stable, constexpr
    for (std::size_t j = i; j > 0 && before(out[j], out[j - 1]); --j) {
      const auto t = out[j];
      out[j] = out[j - 1], out[j - 1] = t;
    }
  return out;
}

/// The cheapest layout on `world` GPUs for which every rank fits; a named error if none does.
constexpr parallel_layout cheapest_layout(const step_facts& f, std::int64_t world) {
  const auto r = rank_layouts(f, world);
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

// ---- DeepSpeed's own estimators, for pinning ------------------------------------------------

/// estimate_zero2_model_states_mem_needs (deepspeed/runtime/zero/stage_1_and_2.py), GPU bytes.
constexpr std::int64_t deepspeed_zero2_gpu_bytes(std::int64_t total_params, std::int64_t gpus, bool cpu_offload) {
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
