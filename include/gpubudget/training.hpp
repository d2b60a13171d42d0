// gpubudget/training.hpp — the training (or inference) policy a budget is computed for.
#pragma once
#include <cstdint>

#include <gpubudget/units.hpp>
#include <gpubudget/alloc_conf.hpp>

namespace gpubudget {

/// Numeric precision of a step.
enum class precision_mode : std::uint8_t {
  fp32,       ///< everything fp32
  amp_fp16,   ///< autocast fp16: fp32 parameters, fp16 activations for matmul/conv ops
  amp_bf16,   ///< autocast bf16
  pure_fp16,  ///< fp16 parameters, gradients and activations, fp32 master weights
  pure_bf16,  ///< bf16 parameters, gradients and activations, fp32 master weights
};
inline constexpr precision_mode fp32 = precision_mode::fp32;
inline constexpr precision_mode amp_fp16 = precision_mode::amp_fp16;
inline constexpr precision_mode amp_bf16 = precision_mode::amp_bf16;
inline constexpr precision_mode pure_fp16 = precision_mode::pure_fp16;
inline constexpr precision_mode pure_bf16 = precision_mode::pure_bf16;

/// What a precision mode means for tensor types: the one place every part of the library asks.
struct precision_types {
  bool autocast = false;        ///< AMP: fp32 parameters, 16-bit matmul/conv activations
  bool pure16 = false;          ///< 16-bit parameters and gradients, fp32 master weights
  dtype half = dtype::fp16;     ///< the 16-bit type in use (fp16 or bf16)
  dtype parameters = dtype::fp32;  ///< storage type of parameters and their gradients
  /// Autocast runs its fp32 op list (softmax, layer/group norm, ...) in fp32: CUDA autocast does;
  /// CPU autocast keeps them in the input's type (op_rules.md, PyTorch 2.6 CPU #28, same in 1.13).
  bool upcasts_fp32_ops = true;
  /// Type of matmul/conv outputs for an input of type `in`.
  /// Token ids (int64) are no GEMM or convolution input: an embedding belongs in between.
  constexpr dtype matmul(dtype in) const {
    return in == dtype::int64 ? (detail::layer_needs_float_features_not_token_ids(), in) : autocast || pure16 ? half : in;
  }
  /// Type of ops autocast runs in fp32 (softmax, layer/group norm, losses).
  constexpr dtype fp32_op(dtype in) const { return autocast && upcasts_fp32_ops ? dtype::fp32 : in; }
  /// Type of ops on CPU autocast's fp32 list only (autocast_mode.cpp, CPU: reflection_pad1d/2d,
  /// replication_pad1d/2d/3d, ...), which CUDA autocast leaves in the input's type.
  constexpr dtype cpu_fp32_op(dtype in) const { return autocast && !upcasts_fp32_ops ? dtype::fp32 : in; }
};
constexpr precision_types types_of(precision_mode p, bool cuda = true) {
  precision_types t{};
  t.upcasts_fp32_ops = cuda;
  t.autocast = p == precision_mode::amp_fp16 || p == precision_mode::amp_bf16;
  t.pure16 = p == precision_mode::pure_fp16 || p == precision_mode::pure_bf16;
  t.half = p == precision_mode::amp_bf16 || p == precision_mode::pure_bf16 ? dtype::bf16 : dtype::fp16;
  t.parameters = t.pure16 ? t.half : dtype::fp32;
  return t;
}

/// The optimizer. adam8bit / adamw8bit: bitsandbytes' Adam8bit / AdamW8bit (block-wise 8-bit
/// state, optim_8bit.hpp: the state bytes per parameter tensor; its fused kernel updates in place).
enum class optimizer_kind : std::uint8_t { none, sgd, sgd_momentum, adam, adamw, adam8bit, adamw8bit };
inline constexpr optimizer_kind sgd = optimizer_kind::sgd;
inline constexpr optimizer_kind sgd_momentum = optimizer_kind::sgd_momentum;
inline constexpr optimizer_kind adam = optimizer_kind::adam;
inline constexpr optimizer_kind adamw = optimizer_kind::adamw;
inline constexpr optimizer_kind adam8bit = optimizer_kind::adam8bit;
inline constexpr optimizer_kind adamw8bit = optimizer_kind::adamw8bit;
constexpr bool is_8bit(optimizer_kind o) { return o == optimizer_kind::adam8bit || o == optimizer_kind::adamw8bit; }

/// bitsandbytes' 8-bit Adam state of one parameter tensor of `n` elements, in bytes
/// (bitsandbytes/optim/optimizer.py, Optimizer2State.init_state, at commit 06029dd6): a tensor
/// with fewer than `min_8bit_size` = 4096 elements keeps two fp32 states (state1, state2); a
/// larger one two uint8 states plus, block-wise (block_wise=True, the default), one fp32 absmax
/// per 2048 elements for each (`blocks = n // 2048`, +1 for a remainder: absmax1, absmax2).
/// (Later bitsandbytes versions quantize in blocks of 256.)
constexpr std::int64_t adam8bit_state_bytes(std::int64_t n) {
  return n < 4096 ? 8 * n : 2 * n + 8 * ((n + 2047) / 2048);
}
/// The two shared quantization maps (qmap1 "dynamic", qmap2 "udynamic": F.create_dynamic_map,
/// 256 fp32 values each), once per optimizer.
inline constexpr std::int64_t adam8bit_qmap_bytes = 2 * 256 * 4;

/// How `optimizer.step()` walks the parameters (PyTorch's three implementations).
enum class step_impl : std::uint8_t {
  for_loop,  ///< one parameter at a time: temporaries the size of one parameter (PyTorch CPU default)
  foreach,   ///< multi-tensor: temporaries for all parameters at once (PyTorch CUDA default)
  fused,     ///< fused kernel: no temporaries
};

/// Where the computation runs: decides op implementations that differ between back ends
/// (e.g. dropout keeps a 1-byte mask on CUDA but a full fp32 noise tensor on CPU).
enum class backend_kind : std::uint8_t { cuda, cpu };

/// The framework and back end a step is estimated for. Every rule that differs between them is
/// written once, in the op (or shared primitive, detail/ops.hpp) it belongs to, and cites the
/// measurement (benchmarks/accuracy/op_rules.md, "PyTorch 2.6 CPU: what changed", row #).
enum class runtime_kind : std::uint8_t {
  torch1_13_cpu,  ///< PyTorch 1.13 CPU (OpenBLAS, oneDNN): reference/pytorch-1.13-cpu.json
  torch2_6_cpu,   ///< PyTorch 2.6 CPU (OpenBLAS 0.3.29, oneDNN): reference/pytorch-2.6-cpu.json
  /// PyTorch 2.x on CUDA: what a user on a GPU runs. Not yet measured on a GPU. It takes 2.6's
  /// device-independent rules (torch2(): autograd formulas, the autograd engine, checkpointing,
  /// the Python foreach optimizers; op_rules.md "applies to torch2-cuda") and CUDA's own kernels
  /// (fused dropout's bool mask, cuBLAS/cuDNN workspaces, flash attention where the model's
  /// attention_impl says so); never the CPU kernels' transients (torch26_cpu()).
  torch2_cuda,
};

/// Does `r` follow PyTorch 2.x's device-independent rules (tools/autograd/derivatives.yaml, the
/// autograd engine, torch/utils/checkpoint.py, torch/optim)? Every runtime but 1.13.
constexpr bool is_torch2(runtime_kind r) { return r != runtime_kind::torch1_13_cpu; }

/// The back end a runtime runs on.
constexpr backend_kind backend_of(runtime_kind r) { return r == runtime_kind::torch2_cuda ? backend_kind::cuda : backend_kind::cpu; }

/// CPU back end only: the vector ISA PyTorch's CPU kernels dispatch to
/// (torch.backends.cpu.get_cpu_capability()). It decides where a 16-bit GEMM runs (ops.hpp
/// cpu_half_gemm_copy): oneDNN with AVX512, OpenBLAS's sbgemm without.
enum class cpu_isa : std::uint8_t { avx512, avx2 };

/// Which kernels F.scaled_dot_product_attention may run on CUDA, as
/// torch.nn.attention.sdpa_kernel(backend) restricts them around a step; `automatic`: PyTorch's
/// own choice (layers/attention.hpp, sdpa_kernel_for, says which it picks).
enum class sdpa_backend : std::uint8_t { automatic, flash, efficient, cudnn, math };

/// The loss appended to the model's output.
enum class loss_kind : std::uint8_t {
  mean_square,    ///< (out ** 2).mean(): what the reference measurements use
  /// F.cross_entropy(out, y): log_softmax over the last dimension + nll, saving the
  /// log-probabilities. CUDA autocast runs log_softmax in fp32 on the 16-bit logits
  /// (autocast_mode.cpp fp32_set_opt_dtype: no copy, an fp32 output; its backward returns the
  /// logits' type).
  cross_entropy,
  /// transformers' ForCausalLMLoss (loss_utils.py), the decoders' `model(ids, labels=...).loss`:
  /// `logits.float()` first (an fp32 copy of the logits), then cross-entropy in fp32.
  causal_lm,
};

/// A distillation teacher: run without grad before the student's forward.
struct teacher_policy {
  bool present = false;
  bool offloaded_to_cpu = false;  ///< parameters live in host memory; only its activations touch the GPU
  std::int64_t parameter_count = 0;
  std::int64_t forward_peak_bytes = 0;  ///< no-grad forward peak per micro-batch (see teacher())
  dtype parameter_type = dtype::fp32;
};

/// One training (or inference) configuration.
struct training {
  std::int64_t batch = 1;                 ///< samples per optimizer step (effective batch)
  std::int64_t micro_batch = 0;           ///< samples per forward/backward; 0 = batch (no accumulation)
  precision_mode precision = precision_mode::fp32;
  optimizer_kind optimizer = optimizer_kind::adamw;
  step_impl step = step_impl::foreach;
  bool ema = false;                       ///< keeps an fp32 EMA copy of the parameters
  /// pure_fp16 / pure_bf16 only. true: an fp32 master copy of the trainable weights, updated by
  /// the optimizer in fp32 (apex O2, DeepSpeed, Megatron). false: the model itself is 16-bit
  /// (`model.to(torch.bfloat16)`, or from_pretrained / from_config in a 16-bit dtype) and a
  /// torch.optim optimizer updates it directly: no copy, its state zeros_like(param), 16-bit too
  /// (the CLI's --no-master-weights).
  bool master_weights = true;
  bool inference = false;                 ///< forward only, under no_grad
  bool checkpoint_all = false;            ///< checkpoint every top-level block of the model
  bool checkpoint_blocks = false;         ///< checkpoint every repetition inside repeat(...) blocks
  /// Only the modules these comma-separated names select (and everything under them) train; the
  /// rest is frozen (`--freeze-all-but`), e.g. "stage4,decoder" or "layer4.2.conv3" (PyTorch
  /// module paths, copies of repeated blocks included: detail/module_names.hpp). A name that
  /// selects nothing is the error train_only_prefix_matches_no_record_name. nullptr: no such
  /// restriction.
  const char* train_only = nullptr;
  bool freeze_all = false;                ///< every parameter frozen (e.g. a linear probe is added elsewhere)
  loss_kind loss = loss_kind::mean_square;
  /// The training loop holds the model's output through backward (`out = model(x); loss =
  /// f(out); loss.backward()`, as the reference measurements do). false: the loss is computed
  /// where the output is made and the output is dropped (`model(ids, labels=ids).loss`,
  /// `F.cross_entropy(model(x), y)`), so it goes before backward unless the loss saved it: an
  /// LLM's logits (Gemma-2B at 2 x 1,024 tokens: 1.05 GB in bf16).
  bool output_held = true;
  sdpa_backend sdpa = sdpa_backend::automatic;  ///< CUDA: the SDPA kernels allowed (sdpa_kernel)
  /// The framework/back end estimated for (default: what a user on a GPU has, PyTorch 2.x CUDA).
  runtime_kind runtime = runtime_kind::torch2_cuda;
  /// Kept for existing call sites: backend_of(runtime). A plan that sets only `backend = cpu`
  /// (written before runtimes existed) means PyTorch 1.13 CPU (see rules()).
  backend_kind backend = backend_kind::cuda;
  /// CPU back end only: intra-op threads (some oneDNN scratch is per thread). The reference
  /// measurements use 2.
  std::int64_t cpu_threads = 2;
  /// CPU back end only: the CPU's ISA (cpu_isa). The reference measurements ran on AVX512 Xeons,
  /// the LLM file's later cases on an AVX2 EPYC (each such case says "cpu_capability": "AVX2").
  cpu_isa cpu_capability = cpu_isa::avx512;
  teacher_policy teacher{};
  /// Budget bf16 on a GPU without bf16 arithmetic (compute capability < 8.0: T4, V100), where
  /// PyTorch refuses or emulates it; without it such a budget is the error
  /// bf16_needs_compute_capability_8 (the CLI's --allow-emulated-bf16).
  bool emulated_bf16 = false;
  /// Reserve for the caching allocator's fragmentation, in percent of the allocated peak.
  /// Default 10: FRAGMENTATION_BUFFER = 0.10 of seed report 002's pipeline/memory.py.
  std::int64_t fragmentation_percent = 10;
  /// Replay the step through a model of PyTorch's CUDA caching allocator (detail/
  /// caching_allocator.hpp) instead of the flat reserve: the reserved peak comes from the same
  /// walk as the live peak, and fits() asks whether an allocator capped at the device runs it.
  /// Off by default in C++ (a budget in a static_assert stays within the compilers' default
  /// constexpr limits: on, the walk runs every copy of a repeat and the replay runs the steps
  /// until the cache settles); the CLI turns it on unless --fragmentation is given.
  bool model_allocator = false;
  allocator_settings allocator{};  ///< PYTORCH_CUDA_ALLOC_CONF (alloc_conf("expandable_segments:True"))
  /// With model_allocator: the training steps the job runs, which the allocator's replay runs
  /// until a step leaves the cache as it found it (makes and frees no segment). Under a capped
  /// device a later step can run out of memory where the first ones did not: a 3-step trial is
  /// not a training run (op_rules.md A19). 0: a long job (budget.hpp's long_job_steps, the command
  /// line's default too); 3 answers for a 3-step trial, as the real-library files ran.
  std::int32_t steps = 0;

  /// The runtime whose rules apply: `runtime`, except that a plan with `backend = cpu` and the
  /// default runtime is the 1.13 CPU reference (what `backend = cpu` meant before runtimes).
  constexpr runtime_kind rules() const {
    return backend == backend_kind::cpu && runtime == runtime_kind::torch2_cuda ? runtime_kind::torch1_13_cpu : runtime;
  }
  /// Does the step run on the CPU (host bookkeeping, OpenBLAS/oneDNN transients, CPU dropout)?
  constexpr bool on_cpu() const { return backend_of(rules()) == backend_kind::cpu; }
  /// PyTorch 2.x's device-independent rules: 2.6 CPU and 2.x CUDA (op_rules.md "PyTorch 2.6
  /// CPU: what changed", rows marked "applies to torch2-cuda: yes").
  constexpr bool torch2() const { return is_torch2(rules()); }
  /// PyTorch 2.6's CPU kernels only (OpenBLAS 0.3.29, the CPU flash kernel, host bookkeeping).
  constexpr bool torch26_cpu() const { return rules() == runtime_kind::torch2_6_cpu; }

  /// 16-bit parameters that the optimizer updates themselves (master_weights = false).
  constexpr bool updates_16_bit_weights() const { return types_of(precision).pure16 && !master_weights; }
  /// The type of the optimizer's state and step temporaries: fp32, or the parameters' own
  /// 16-bit type when they are updated without a master copy.
  constexpr dtype optimizer_state_type() const { return updates_16_bit_weights() ? types_of(precision).parameters : dtype::fp32; }
  constexpr std::int64_t micro() const { return micro_batch > 0 ? micro_batch : batch; }
  /// ceil(batch / micro), without the overflow of (batch + micro - 1) near INT64_MAX.
  constexpr std::int64_t accumulation_steps() const { return batch / micro() + (batch % micro() != 0 ? 1 : 0); }
};

/// `t` estimated for runtime `r` (sets `runtime` and the matching `backend`).
constexpr training for_runtime(training t, runtime_kind r) {
  t.runtime = r;
  t.backend = backend_of(r);
  return t;
}

/// The configuration PyTorch's CPU reference measurements use: fp32, for-loop optimizer step
/// (the CPU default of 1.13 and 2.6), mean-square loss, CPU op implementations; PyTorch 1.13
/// unless `r` says otherwise (torch2_6_cpu: reference/pytorch-2.6-cpu.json).
constexpr training cpu_reference_step(std::int64_t batch, optimizer_kind opt, runtime_kind r = runtime_kind::torch1_13_cpu) {
  training t{};
  t.batch = batch;
  t.optimizer = opt;
  t.step = step_impl::for_loop;
  return for_runtime(t, r == runtime_kind::torch2_cuda ? runtime_kind::torch1_13_cpu : r);
}

}  // namespace gpubudget
