// gpubudget/budget.hpp — the memory budget of one model under one training policy on one GPU.
//
//   constexpr auto b = budget(model, training{.batch = 8, .precision = amp_bf16}, devices::v100_16gb);
//
// Two families of numbers are kept apart on purpose:
//  * live tensor bytes — what PyTorch's tensors occupy (resident state, saved activations, the
//    step's peak), checkable against torch.cuda.max_memory_allocated or a CPU malloc count;
//  * device bytes — live tensors plus CUDA context, cuBLAS/cuDNN workspaces, the caching
//    allocator's rounding and a fragmentation reserve, checkable against cudaMemGetInfo.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <gpubudget/detail/allocator_replay.hpp>
#include <gpubudget/detail/walk.hpp>
#include <gpubudget/devices.hpp>
#include <gpubudget/graph.hpp>
#include <gpubudget/layers.hpp>  // for its users: a model to budget is written with the layer factories
#include <gpubudget/training.hpp>

namespace gpubudget {

struct memory_budget {
  std::string_view device_name{};
  catalog_gpu device_id = catalog_gpu::custom;
  std::int64_t capacity = 0;
  training plan{};

  std::int64_t parameter_count = 0;  ///< parameter elements
  std::int64_t trainable_count = 0;  ///< of which require grad
  /// Of parameter_count, frozen base weights stored in a type of their own (LoRA's base_layer in
  /// bf16, fp16 or 4/8-bit) and their bytes, which `parameters` includes.
  std::int64_t base_weight_count = 0, base_weight_bytes = 0;

  // Resident state: lives across steps.
  std::int64_t parameters = 0, buffers = 0, master_weights = 0, optimizer_state = 0, ema = 0, teacher = 0;
  std::int64_t input_batch = 0;  ///< one micro-batch of input data on the device

  // One step, live tensor bytes above the resident state.
  std::int64_t gradients = 0;            ///< .grad of trainable parameters at optimizer.step()
  std::int64_t saved_activations = 0;    ///< saved for backward after forward (each storage once)
  std::int64_t after_forward = 0;        ///< live right after forward + loss
  std::int64_t forward_peak = 0;
  std::int64_t fwd_bwd_peak = 0;         ///< through backward (gradients allocated so far included)
  std::int64_t step_peak = 0;            ///< through optimizer.step()
  std::int64_t gradients_at_peak = 0;    ///< part of step_peak that is .grad
  std::int64_t optimizer_temporaries = 0;///< step() temporaries at their largest
  std::int64_t step_peak_rounded = 0;    ///< step_peak with every block rounded to 512 B
  std::int32_t peak_record = -1;         ///< model record during whose forward/backward the peak occurs (-1: loss or step())
  bool peak_in_backward = false;

  // Device side.
  std::int64_t cuda_context = 0, cublas_workspace = 0, cudnn_workspace = 0;
  std::int64_t allocator_rounding = 0, fragmentation = 0;
  /// training::model_allocator: the caching allocator model's max_memory_reserved for the run
  /// (warm-up step + measured step, cuBLAS workspaces included; fragmentation is what it holds
  /// beyond the live peak), and whether an allocator capped at capacity - context runs out.
  bool allocator_modelled = false;
  bool allocator_out_of_memory = false;
  std::int64_t reserved_peak = 0;
  /// The same replay's measured step in allocated blocks above the resident ones (what
  /// torch.cuda.memory_allocated and max_memory_allocated report): after forward, through backward,
  /// through optimizer.step().
  std::int64_t allocated_after_forward = 0, allocated_fwd_bwd_peak = 0, allocated_step_peak = 0;
  /// max_memory_allocated over the whole replayed run, resident blocks (and cuBLAS workspaces) included.
  std::int64_t allocated_total_peak = 0;

  // Sums are overflow-checked like every byte count: a budget never wraps (issue C).
  constexpr std::int64_t resident() const {
    return checked_add(checked_add(checked_add(parameters, buffers), checked_add(master_weights, optimizer_state)),
                       checked_add(checked_add(ema, teacher), input_batch));
  }
  /// Activations and temporaries at the step's peak (the peak minus the gradients then alive).
  constexpr std::int64_t activations_at_peak() const { return step_peak - gradients_at_peak; }
  /// Live tensor bytes at the peak: torch.cuda.max_memory_allocated's counterpart.
  constexpr std::int64_t peak_tensor_bytes() const { return checked_add(resident(), step_peak); }
  constexpr std::int64_t workspace() const { return checked_add(cublas_workspace, cudnn_workspace); }
  /// Everything the device must hold at the peak.
  constexpr std::int64_t total() const {
    return checked_add(checked_add(peak_tensor_bytes(), checked_add(cuda_context, workspace())), checked_add(allocator_rounding, fragmentation));
  }
  constexpr std::int64_t headroom() const { return capacity - total(); }
};

/// Where a budget component lives.
enum class component_kind : std::uint8_t {
  resident,         ///< lives across steps (parameters, optimizer state, the input batch, ...)
  step,             ///< live tensors the step's peak adds (gradients, activations)
  device_allocated, ///< allocated on the device by libraries or the allocator (workspaces, rounding)
  device_reserved,  ///< held but not allocated by the step (CUDA context, fragmentation reserve)
};

/// One line of a budget: every table, export and probe iterates over `components(b)`.
struct budget_component {
  std::string_view key;    ///< machine name (CSV, JSON): "optimizer_state"
  std::string_view label;  ///< human name: "Optimizer state"
  std::int64_t bytes = 0;
  component_kind kind = component_kind::resident;
  bool always_shown = false;  ///< tables show it even when zero
};

/// The components of `b`, in table order; they add up to b.total().
constexpr std::array<budget_component, 13> components(const memory_budget& b) {
  using k = component_kind;
  return {{{"parameters", "Parameters", b.parameters, k::resident, true},
           {"buffers", "Buffers", b.buffers, k::resident, false},
           {"master_weights", "FP32 master weights", b.master_weights, k::resident, false},
           {"optimizer_state", "Optimizer state", b.optimizer_state, k::resident, false},
           {"ema", "EMA copy", b.ema, k::resident, false},
           {"teacher", "Teacher (on GPU)", b.teacher, k::resident, false},
           {"input_batch", "Input batch", b.input_batch, k::resident, true},
           {"gradients_at_peak", "Gradients (at peak)", b.gradients_at_peak, k::step, true},
           {"activations_at_peak", "Activations + temporaries (at peak)", b.activations_at_peak(), k::step, true},
           {"cuda_context", "CUDA context", b.cuda_context, k::device_reserved, true},
           {"workspace", "cuBLAS + cuDNN workspace", b.workspace(), k::device_allocated, true},
           {"allocator_rounding", "Allocator rounding (512 B blocks)", b.allocator_rounding, k::device_allocated, true},
           {"fragmentation", "Fragmentation reserve", b.fragmentation, k::device_reserved, true}}};
}

/// A budget plus what every record of the model contributed.
template <std::size_t N>
struct model_budget : memory_budget {
  std::array<layer, N> records{};                    ///< the model's records
  std::array<detail::record_stats, N> per_record{};  ///< what each record contributed
};

namespace detail {

/// Optimizer state bytes per trainable parameter: fp32 buffers, or for 8-bit Adam two uint8
/// states (its per-tensor fp32 fallback and absmax blocks are in the budget's exact figure,
/// walk_totals::trainable_adam8bit_state; layouts that only know a parameter count use this).
constexpr std::int64_t optimizer_state_bytes_per_param(optimizer_kind o) {
  switch (o) {
    case optimizer_kind::sgd_momentum: return 4;  // momentum_buffer
    case optimizer_kind::adam:
    case optimizer_kind::adamw: return 8;         // exp_avg, exp_avg_sq
    case optimizer_kind::adam8bit:
    case optimizer_kind::adamw8bit: return 2;     // state1, state2 (uint8)
    default: return 0;
  }
}

/// Temporaries of optimizer.step() (PyTorch 1.13 torch/optim/adamw.py, adam.py, sgd.py):
/// Adam(W) computes denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps): two
/// parameter-sized tensors alive at once, per parameter in the for-loop version, for all of
/// them in the foreach version (_foreach_sqrt then _foreach_add). SGD and momentum update in
/// place. Fused kernels allocate none (also on the 2.6 CPU, op_rules.md 2.6 #21), nor do
/// bitsandbytes' 8-bit kernels (optimizer_update_8bit_blockwise dequantizes, updates and
/// requantizes each block in place).
constexpr std::int64_t optimizer_temporaries(const training& p, std::int64_t largest, std::int64_t total, dtype state) {
  if (p.optimizer != optimizer_kind::adam && p.optimizer != optimizer_kind::adamw) return 0;
  switch (p.step) {
    case step_impl::for_loop: return 2 * bytes_of(largest, state);
    // 2.x divides the sqrt in place (_foreach_div_, then _foreach_add_): 1 x ΣP (op_rules.md 2.6
    // #21: 2.626 -> 1.313 P_max). torch/optim/adam.py's _multi_tensor_adam runs the same list ops
    // on CUDA (its default there), so CUDA takes the rule too.
    case step_impl::foreach: return (p.torch2() ? 1 : 2) * bytes_of(total, state);
    case step_impl::fused: return 0;
  }
  return 0;
}

struct step_result {
  walk_totals totals{};
  std::int64_t saved = 0, after_forward = 0, forward_peak = 0, fwd_bwd_peak = 0, peak_rounded = 0;
  std::int64_t live_after_backward = 0, grads_at_peak = 0, grads = 0;
  std::int64_t live_after_backward_fixed = 0;  ///< of live_after_backward, batch-independent
  std::int32_t peak_layer = -1;
  bool peak_in_backward = false;
  detail::replay_result allocator{};  ///< the caching allocator replay (reserved_peak < 0: not run)
};

/// Appends the loss to `out` and returns the scalar loss (one reference, as the trainer's
/// `loss` variable holds it).
constexpr value append_loss(sim& s, const value& out) {
  value per_element{};
  bool nll_keeps_input = false;
  if (s.plan.loss == loss_kind::cross_entropy && s.types.fp32_op(out.type) != out.type) {
    // F.cross_entropy on 16-bit logits under CUDA autocast (op_rules.md CT8): log_softmax runs in
    // the logits' type and keeps its output; nll_loss (autocast's fp32 list) takes an fp32 copy
    // of it and keeps that for its backward.
    value log_probs = pointwise(s, out, out.s, out.type, keeps::output);
    per_element = cast_to(s, log_probs, dtype::fp32);
    s.release(log_probs);
    nll_keeps_input = true;
  } else if (s.plan.loss == loss_kind::cross_entropy && s.types.cpu_fp32_op(out.type) == out.type) {
    per_element = pointwise(s, out, out.s, out.type, keeps::output);  // log_softmax keeps its output
  } else if (s.plan.loss == loss_kind::causal_lm || s.plan.loss == loss_kind::cross_entropy) {
    // ForCausalLMLoss's logits.float(); and F.cross_entropy under CPU autocast, whose fp32 list has it
    // (autocast_mode.cpp KERNEL_CPU(cross_entropy_loss, fp32): an fp32 copy, log_softmax and nll_loss
    // in fp32; op_rules.md L35)
    value x32 = cast_to(s, out, dtype::fp32);
    per_element = pointwise(s, x32, x32.s, dtype::fp32, keeps::output);  // log_softmax keeps its output
    s.release(x32);
  } else {
    // out ** 2 keeps out; its backward (pow_backward: grad * (2 * out.pow(1))) holds two more
    // out-sized temporaries, two blocks asked before its result, which outlives them (op_rules.md
    // A6). CUDA autocast runs pow in fp32 (autocast_mode.cpp: KERNEL_CUDA(pow, Tensor_Scalar,
    // fp32)): a 16-bit out is cast to an fp32 copy, which pow keeps (op_rules.md CT1); CPU
    // autocast does not.
    value x = cast_to(s, out, s.types.fp32_op(out.type));
    per_element = pointwise(s, x, x.s, x.type, keeps::input, 0, 0, s.bytes_of_value(x));
    const auto n = s.record_of(per_element);
    s.backward_temp(n, s.bytes_of_value(x));  // the second
    if (n >= 0) s.node(n).backward_temp_first = true;
    s.release(x);
  }
  value loss{s.allocate(4, false, -1, 4), {}, dtype::fp32, per_element.requires_grad};
  auto n = s.record(loss);
  if (nll_keeps_input) s.save(n, per_element);
  // mean's backward is grad.expand(sizes) / numel: a full-size tensor (so is nll's scatter)
  s.grad_to(n, per_element);
  s.release(per_element);
  return loss;
}

/// `loss + w * loss(aux)` for an auxiliary head's output `aux` (graph.hpp auxiliary_output):
/// the head's loss as the model's (append_loss), then the weighted sum of two scalars. MulBackward0
/// by a number and AddBackward0 keep nothing; both pass the scalar gradient on (alias edges: the
/// weighted one is a 4-byte tensor of its own, one 512 B block, not counted).
constexpr value add_auxiliary_loss(sim& s, const value& loss, const value& aux) {
  const value own = append_loss(s, aux);
  const value weighted = scalar_of(s, own);
  s.release(own);
  const value sum = scalar_of(s, loss, weighted);
  s.release(loss), s.release(weighted);
  return sum;
}

/// The policy's own numbers, each named when out of range (issue C). Divisibility of the batch
/// by the micro-batch is checked by the public entry points (check_divides): max_micro_batch
/// probes micro-batches that need not divide the batch.
constexpr void check_plan(const training& plan) {
  if (plan.batch <= 0) batch_must_be_positive();
  if (plan.micro_batch < 0) micro_batch_must_not_be_negative();
  if (plan.fragmentation_percent < 0 || plan.fragmentation_percent > 100) fragmentation_percent_out_of_range();
}
constexpr void check_divides(const training& plan) {
  check_plan(plan);  // a zero batch or micro-batch is named before it is divided by
  if (plan.batch % plan.micro() != 0) micro_batch_does_not_divide_batch();
}
constexpr void check_device(const device& dev) {
  if (dev.capacity <= 0) device_capacity_must_be_positive();
  if (dev.context < 0 || dev.cublas_workspace < 0 || dev.inference_context < 0) device_memory_terms_must_not_be_negative();
}

/// Does the model hold a repeat<N>(block), which training::checkpoint_blocks checkpoints?
template <std::size_t N>
constexpr bool has_repeated_block(const std::array<layer, N>& records) {
  for (const auto& L : records)
    if (L.kind == node_kind::repeat) return true;
  return false;
}

/// bf16 needs compute capability 8.0 (Ampere) or an explicit `emulated_bf16`; a custom device
/// with no capability (0) is taken at its word.
constexpr void check_bf16_support(const training& plan, const device& dev) {
  const bool bf16 = plan.precision == precision_mode::amp_bf16 || plan.precision == precision_mode::pure_bf16;
  if (bf16 && !plan.emulated_bf16 && dev.compute_capability > 0 && dev.compute_capability < 80) bf16_needs_compute_capability_8();
}

/// Can the subtree at `b` share the weights of the one at `a`? The walk pairs their records by
/// position, so they need the same records (kinds, spans, counts) running the same ops with the
/// same weight signature (op_descriptor::weight_signature: a linear's output width); an op that
/// owns no weight pairs with any op (shared(1, embedding(V, D)) ... shared(1, tied_linear(V)) or
/// transposed_tied_linear(V)). Other fields may differ (seed 001 shares one attention over two
/// key lengths).
template <std::size_t N>
constexpr bool same_block(const std::array<layer, N>& r, std::size_t a, std::size_t b) {
  if (r[a].span != r[b].span) return false;
  for (std::size_t k = 0; k < static_cast<std::size_t>(r[a].span); ++k) {
    const layer &x = r[a + k], &y = r[b + k];
    if (x.kind != y.kind || x.span != y.span || x.count != y.count || x.merge != y.merge) return false;
    if (!x.op || !y.op) {
      if (x.op != y.op) return false;
      continue;  // composites: their children are compared in turn
    }
    const auto sx = x.op->weight_signature(x), sy = y.op->weight_signature(y);
    if (sx >= 0 && sy >= 0 && (x.op != y.op || sx != sy)) return false;  // both own weights: the same ones
  }
  return true;
}

/// The shared block at `i` has the structure of the first block with its id.
template <std::size_t N>
constexpr void check_shared_with_first(const std::array<layer, N>& r, std::size_t i) {
  std::size_t j = 0;
  while (r[j].share_id != r[i].share_id) ++j;  // stops at i at the latest
  if (j < i && !same_block(r, j, i)) shared_id_reused_for_a_different_block();
}

/// Every shared(id, ...) has the structure of the first block with that id.
template <std::size_t N>
constexpr void check_shared(const std::array<layer, N>& r) {
  for (std::size_t i = 0; i < N; ++i)
    if (r[i].share_id > 0) check_shared_with_first(r, i);
}

/// The training steps of a job whose plan does not name them (training::steps = 0): a long one.
/// The replay runs steps until one makes and frees no segment (A19): under a cap the cache need
/// not settle (ResNet-34 AMP bf16 b901 on 16 GiB trained 3 steps and ran out of memory in step 5;
/// six of nine largest batches found with 3-step trials OOMed within 12; H200 device call 17).
/// Most runs settle within a few steps: the zoo's batch searches on a V100 16 GB ran at most 13
/// (ResNet-50 AMP fp16), 3 to 8 on average (build-time cost: ResNet-50's max_micro_batch_of on an
/// H100 206,278 Clang steps for its dearest evaluation either way, each 1,024 storages of a replay
/// being an evaluation of its own; Clang 9.0 → 10.9 s, GCC 8.6 → 9.1 s). The command line's
/// default too.
inline constexpr std::int32_t long_job_steps = 1000;

/// model.to(device) and the batch: the tensors resident before the first step, in the order the
/// measured process allocates them. `past_oom`: the run goes on uncapped after an OOM
/// (caching_allocator::lift_cap_after_oom). False when the steps are not run: they ran out of
/// memory already.
constexpr bool replay_model_to(caching_allocator& a, const replay_tape& t, const replay_setup& setup, bool past_oom) {
  if (past_oom) a.lift_cap_after_oom();
  for (auto bytes : t.base_weight_tensors) a.malloc(bytes);  // from_pretrained's weights, then the adapters
  for (auto e : t.parameter_tensors) a.malloc(bytes_of(e < 0 ? -e : e, t.parameter_type));
  if (setup.decode.head_weight > 0) a.malloc(setup.decode.head_weight);  // generate()'s LM head, outside the prefill's walk
  for (auto bytes : t.own_type_tensors) a.malloc(bytes);  // PEFT's modules_to_save copies, made after the adapters
  a.malloc(setup.buffers), a.malloc(setup.input_batch);
  return past_oom || !a.out_of_memory();
}

/// What a replayed step's end compares with its start.
struct pass_start {
  std::int64_t device_calls = 0, resident = 0;
};

/// Training step `pass` of a replay begins (0: the warm-up, which creates the optimizer state and
/// the cuBLAS workspaces).
constexpr pass_start begin_pass(caching_allocator& a, int pass) {
  if (!std::is_constant_evaluated() && detail::allocator_event_tap) detail::allocator_event_tap('P', pass, -1);  // a step begins
  const pass_start p{a.device_calls(), a.allocated()};
  a.reset_allocated_peak();
  return p;
}

/// The optimizer step's settings for the replay (optimizer_step).
constexpr optimizer_step::settings optimizer_replay_settings(const training& plan) {
  if (plan.inference) return {};  // no optimizer: the step allocates nothing
  const auto temps = plan.optimizer == optimizer_kind::adam || plan.optimizer == optimizer_kind::adamw
                         ? (plan.step == step_impl::for_loop ? 2 : plan.step == step_impl::fused ? 0 : plan.torch2() ? 1 : 2) : 0;
  return {is_8bit(plan.optimizer) ? 0 : optimizer_state_bytes_per_param(plan.optimizer), temps, plan.step == step_impl::foreach,
          plan.optimizer_state_type()};
}

/// Step `pass`'s storages are replayed (forward, loss, backward): their measured fields to `r`.
constexpr void note_backward_done(const caching_allocator& a, const step_replay& steps, const pass_start& p, replay_result& r) {
  r.after_forward = steps.allocated_after_forward() - p.resident, r.fwd_bwd_peak = a.allocated_peak() - p.resident;
}

/// The end of step `pass` after its optimizer step: the survivors released, the step's peak to
/// `r`. True when the run stops after it: the cache settled (at least two steps: the cache a
/// step leaves splits differently under the next one, op_rules.md A12; a step that makes and frees
/// no segment, since under a cap a step can free cached segments and make others with the reserved
/// peak pinned at the cap, A19), the job's steps ran out, or it ran out of memory (past an OOM,
/// the batch search's probe, the second step's blocks in use are known).
constexpr bool finish_pass(caching_allocator& a, step_replay& steps, const training& plan, int pass, bool past_oom, const pass_start& p,
                           replay_result& r) {
  r.step_peak = a.allocated_peak() - p.resident;
  if (a.allocated_peak() > r.total_peak) r.total_peak = a.allocated_peak();
  steps.release_survivors();
  const bool settled = a.device_calls() == p.device_calls;
  const int steps_to_run = plan.steps > 0 ? plan.steps : long_job_steps;
  r.reserved_peak = a.reserved_peak(), r.out_of_memory = a.out_of_memory();
  return (pass > 0 && (settled || a.out_of_memory())) || pass + 1 >= steps_to_run || (!past_oom && a.out_of_memory());
}

/// The end of step `pass` (its storages replayed): the optimizer step, then finish_pass.
constexpr bool end_pass(caching_allocator& a, step_replay& steps, const replay_tape& t, const training& plan, int pass, bool past_oom,
                        const pass_start& p, replay_result& r) {
  note_backward_done(a, steps, p, r);
  optimizer_step o(a, t, pass == 0, optimizer_replay_settings(plan));
  o.run_until(o.work());
  return finish_pass(a, steps, plan, pass, past_oom, p, r);
}

/// Training step `pass` of a replay, whole (begin_pass, its storages, end_pass).
constexpr bool replay_pass(caching_allocator& a, step_replay& steps, const replay_tape& t, const training& plan, int pass, bool past_oom,
                           replay_result& r) {
  const auto p = begin_pass(a, pass);
  steps.run(pass == 0);
  return end_pass(a, steps, t, plan, pass, past_oom, p, r);
}

/// A training run (model.to, warm-up step, the steps after it until the cache settles) through
/// the caching allocator model under `cap` (0: none); `past_oom`: going on uncapped after an
/// OOM (caching_allocator::lift_cap_after_oom). The step fields are the last step's, as
/// measure_cuda.py's measured step.
constexpr replay_result replay_run(const replay_tape& t, const training& plan, const replay_setup& setup, std::int64_t cap, bool past_oom) {
  caching_allocator a(plan.allocator, cap);
  const bool runs = replay_model_to(a, t, setup, past_oom);
  replay_result r{};
  r.reserved_peak = a.reserved_peak(), r.out_of_memory = a.out_of_memory();
  if (!runs) return r;
  step_replay steps(t, a, setup);
  for (int pass = 0; !replay_pass(a, steps, t, plan, pass, past_oom, r); ++pass) {}
  return r;
}

/// generate() through the caching allocator model (replay_setup::decode): model.to, the prefill
/// (the inference forward's storages, its output cache kept), then the decode steps.
constexpr replay_result replay_generate(const replay_tape& t, const training& plan, const replay_setup& setup, std::int64_t cap) {
  caching_allocator a(plan.allocator, cap);
  replay_result r{};
  if (replay_model_to(a, t, setup, false)) {
    const auto p = begin_pass(a, 0);
    step_replay steps(t, a, setup);
    steps.run(true);
    r.after_forward = a.allocated() - p.resident;
    dyn_array<std::int32_t> cache{};
    for (auto id : t.output_cache) cache.push_back(steps.handles()[static_cast<std::size_t>(id)]);
    if (cache.size_ != 2 * static_cast<std::size_t>(setup.decode.layers)) generate_cache_is_not_a_k_and_v_per_layer();
    decode_replay(a, setup.decode).run(cache);
    r.fwd_bwd_peak = r.step_peak = a.allocated_peak() - p.resident, r.total_peak = a.allocated_peak();
  }
  r.reserved_peak = a.reserved_peak(), r.out_of_memory = a.out_of_memory();
  return r;
}

/// The run through the caching allocator model, uncapped and, when that passes the cap, capped
/// (allocator_replay.hpp); for the batch search's probes (setup.fits_only) capped alone, going on
/// uncapped after an OOM.
constexpr replay_result replay_allocator(const sim& s, const training& plan, const replay_setup& setup) {
  dyn_array<tape_storage> storages{};
  const auto t = tape_of(s, storages);
  if (setup.decode.active) {
    auto r = replay_generate(t, plan, setup, 0);
    if (setup.cap > 0 && r.reserved_peak > setup.cap) r.out_of_memory = replay_generate(t, plan, setup, setup.cap).out_of_memory;
    return r;
  }
  if (setup.fits_only && setup.cap > 0) return replay_run(t, plan, setup, setup.cap, true);
  auto r = replay_run(t, plan, setup, 0, false);
  if (setup.cap > 0 && r.reserved_peak > setup.cap) r.out_of_memory = replay_run(t, plan, setup, setup.cap, false).out_of_memory;
  return r;
}

/// The device's replay setup with the walk's resident buffers and input batch.
constexpr replay_setup replay_setup_with(replay_setup setup, const step_result& r) {
  setup.buffers = r.totals.buffer_bytes, setup.input_batch = r.totals.input_bytes;
  return setup;
}

/// Rejects what the walk cannot budget with a compile-time diagnostic: a bad plan, a bad
/// weight share, checkpoint_blocks on a graph without a repeated block.
template <std::size_t N>
constexpr void check_step_inputs(const std::array<layer, N>& records, const training& plan) {
  check_plan(plan);
  check_shared(records);
  if (plan.checkpoint_blocks && !has_repeated_block(records)) checkpoint_blocks_needs_a_repeated_block();
}

/// Is a step replayed through the caching allocator model? On CUDA, with training::model_allocator:
/// a training step, or an inference forward (its passes, one forward each; generate()'s prefill and
/// decode steps with replay_setup::decode, op_rules.md A22).
constexpr bool replays_allocator(const training& plan) { return plan.model_allocator && !plan.on_cpu(); }

/// Sets `s` up for one training step of `plan` over `records` records: the policy, the tensor
/// types, what is counted, and which moments are reported (a trace, a timeline `recorder`) or
/// logged for the allocator replay (`replay`).
constexpr void configure_sim(sim& s, std::size_t records, const training& plan, bool tracing,
                             moment_recorder* recorder, bool replay) {
  s.reserve_for(records);
  // one statement, as the flag it replaced (constant evaluation counts statements)
  s.on_moment = tracing ? &sim::trace_moment : recorder ? &record_timeline_moment : nullptr, s.recorder = recorder;
  s.batch = plan.micro();
  s.plan = plan;
  s.rules = plan.rules();  // the policy resolved once: the runtime's rules and the tensor types
  s.types = types_of(plan.precision, !plan.on_cpu());
  s.no_grad = plan.inference;
  s.count_host = plan.on_cpu();  // a CPU malloc count sees host bookkeeping
  s.count_adam8bit = is_8bit(plan.optimizer);
  s.host = host_costs_of(plan);
  s.log_allocator = replay && replays_allocator(plan);
}

/// How many micro-batch passes a step walks: one, or two with gradient accumulation (the second
/// starts with every .grad alive); inference: the forward only.
constexpr int walked_passes(const training& plan) { return plan.inference ? 1 : (plan.accumulation_steps() > 1 ? 2 : 1); }

/// Where the forward of pass `pass` ended with `out`: the graph's edges, the after-forward fields,
/// the loss. Returns the loss (id -1 for inference: the forward was all).
constexpr value finish_forward(sim& s, walker& w, const training& plan, int pass, value& out, step_result& r) {
  if (out.id < 0) model_has_no_layers();
  w.run_deferred_heads();
  s.end_forward();
  if (pass == 0) {
    r.totals = w.totals;
    r.totals.input_bytes += s.edge_bytes;  // graph edge lists are part of the batch
    r.saved = s.saved_total;
  }
  if (plan.inference) {
    r.after_forward = s.live;
    r.forward_peak = s.peak.bytes;
    s.release(out);
    if (!s.log_allocator) s.release_output_cache();  // the replay keeps it: a generate() decodes with it (decode_stream)
    w.release_auxiliary();
    return value{};
  }
  value loss = append_loss(s, out);
  for (std::int32_t k = 0; k < w.auxiliary_count; ++k) {
    const auto& h = w.auxiliary[static_cast<std::size_t>(k)];
    loss = h.logvar.id >= 0 ? add_kl_divergence(s, loss, h.held, h.logvar) : add_auxiliary_loss(s, loss, h.held);
  }
  if (!plan.output_held) s.release(out), out = value{}, s.release_output_cache(), w.release_auxiliary();  // dropped: only what the loss saved stays
  if (pass == 0) { r.after_forward = s.live; r.forward_peak = s.peak.bytes; }
  return loss;
}

/// After backward: the trainer's `out` and `loss` (alive through it) go; what optimizer.step()
/// starts from is the .grad tensors.
constexpr void finish_backward(sim& s, walker& w, const value& out, const value& loss, step_result& r) {
  s.release(out);
  s.release_output_cache();
  w.release_auxiliary();
  s.release(loss);
  r.live_after_backward = s.live;
  r.live_after_backward_fixed = s.live_fixed;
}

/// The micro-batch passes of a step: fills `r`'s totals, saved bytes, after-forward and
/// after-backward fields.
constexpr void run_micro_batches(walker& w, sim& s, const training& plan, step_result& r) {
  for (int pass = 0; pass < walked_passes(plan); ++pass) {
    if (pass > 0) w.next_micro_batch();
    value out = w.walk(0, value{}, w.root_scope());
    const value loss = finish_forward(s, w, plan, pass, out, r);
    if (plan.inference) break;
    w.backward(loss.id);
    finish_backward(s, w, out, loss, r);
  }
}

/// The step's peak fields, from the simulation `s` after its last pass.
constexpr void fill_step_peak(step_result& r, const sim& s) {
  r.fwd_bwd_peak = s.peak.bytes;
  r.peak_rounded = s.peak_rounded;
  r.grads_at_peak = s.peak.grads;
  r.grads = s.grads_live;
  r.peak_layer = s.peak.layer;
  r.peak_in_backward = s.peak.in_backward;
}

/// Simulates forward + loss + backward (twice with gradient accumulation: the second
/// micro-batch starts with every .grad alive) in `s` and optionally fills per-record stats, the
/// trace of max_micro_batch or a timeline's moments; `replay`: `s` logs what the caching
/// allocator replay reads (with training::model_allocator on CUDA).
template <std::size_t N>
constexpr step_result walk_step(sim& s, const std::array<layer, N>& records, const training& plan, std::array<record_stats, N>* per_record,
                                dyn_array<live_point>* trace, moment_recorder* recorder, bool replay) {
  check_step_inputs(records, plan);
  configure_sim(s, N, plan, trace != nullptr, recorder, replay);
  walker w(records.data(), static_cast<std::int32_t>(N), s, per_record != nullptr);
  step_result r{};
  run_micro_batches(w, s, plan, r);
  fill_step_peak(r, s);
  r.allocator.reserved_peak = -1;
  if (trace) trace->swap(s.trace);
  if (per_record) for (std::size_t i = 0; i < N; ++i) (*per_record)[i] = w.stats[i];
  return r;
}

/// walk_step, and with `allocator` (and training::model_allocator on CUDA) the run replayed
/// through the caching allocator model.
template <std::size_t N>
constexpr step_result simulate_step(const std::array<layer, N>& records, const training& plan,
                                    std::array<record_stats, N>* per_record, dyn_array<live_point>* trace = nullptr,
                                    moment_recorder* recorder = nullptr, const replay_setup* allocator = nullptr) {
  sim s{};
  auto r = walk_step(s, records, plan, per_record, trace, recorder, allocator != nullptr);
  if (s.log_allocator) r.allocator = replay_allocator(s, plan, replay_setup_with(*allocator, r));
  return r;
}

/// The caching allocator replay's terms (`a`) in place of the flat fragmentation reserve.
constexpr void fill_allocator_terms(memory_budget& b, const replay_result& a) {
  b.allocator_modelled = true;
  b.allocator_out_of_memory = a.out_of_memory;
  b.reserved_peak = a.reserved_peak;
  b.allocated_after_forward = a.after_forward;
  b.allocated_fwd_bwd_peak = a.fwd_bwd_peak, b.allocated_step_peak = a.step_peak;
  b.allocated_total_peak = a.total_peak;
  // cuDNN's workspaces are temporaries the allocator serves from its cache: the largest
  // im2col matrix is no measure of them (convnext_tiny_frozen_b2: 112.6 MiB budgeted, none of
  // its segments above 20 MiB), and the replay reproduces the CNN cases' reserved peaks
  // without them (op_rules.md, caching allocator)
  b.cudnn_workspace = 0;
  const auto held = checked_add(checked_add(b.peak_tensor_bytes(), b.workspace()), b.allocator_rounding);
  b.fragmentation = b.reserved_peak > held ? b.reserved_peak - held : 0;
}

/// Parameters, master weights, optimizer state and EMA. A trainable tensor kept in a type of its
/// own (PEFT's modules_to_save copy of a bf16 base) is stored in that type, and so is its
/// optimizer state (torch.optim keeps zeros_like(param)); no master copy is made of it.
constexpr void fill_model_states(memory_budget& b, const walk_totals& t, const training& plan) {
  const auto types = types_of(plan.precision);
  b.parameter_count = t.parameter_count;
  b.trainable_count = plan.inference ? 0 : t.trainable_count;
  b.base_weight_count = t.base_weight_count;
  b.base_weight_bytes = t.base_weight_bytes;
  const auto own_count = plan.inference ? 0 : t.own_type_trainable, own_bytes = plan.inference ? 0 : t.own_type_trainable_bytes;
  b.parameters = checked_add(checked_add(bytes_of(b.parameter_count - b.base_weight_count - t.own_type_count, types.parameters), b.base_weight_bytes),
                             t.own_type_bytes);
  b.master_weights = types.pure16 && !plan.updates_16_bit_weights() ? bytes_of(b.trainable_count - own_count, dtype::fp32) : 0;
  const auto per_param = optimizer_state_bytes_per_param(plan.optimizer);  // fp32 state per element
  // state tensors per element (Adam: 2), each like the tensor it updates (master or parameter)
  const auto state_bytes = checked_add(bytes_of(b.trainable_count - own_count, plan.optimizer_state_type()), own_bytes);
  b.optimizer_state = plan.inference ? 0
                      : is_8bit(plan.optimizer) ? t.trainable_adam8bit_state + adam8bit_qmap_bytes
                                                : checked_mul(per_param / 4, state_bytes);
  b.ema = plan.ema ? bytes_of(b.parameter_count - b.base_weight_count, dtype::fp32) : 0;  // of what trains and its own-typed peers
}

/// Fills a budget from a simulated step.
constexpr void fill_budget(memory_budget& b, const step_result& r, const training& plan, const device& dev) {
  check_device(dev);
  check_bf16_support(plan, dev);
  if (!plan.master_weights && !types_of(plan.precision).pure16) master_weights_off_needs_16_bit_parameters();
  b.device_name = dev.name;
  b.device_id = dev.id;
  b.capacity = dev.capacity;
  b.plan = plan;
  fill_model_states(b, r.totals, plan);
  b.buffers = r.totals.buffer_bytes;
  b.input_batch = r.totals.input_bytes;
  const auto& t = plan.teacher;
  const auto teacher_bytes = t.present ? bytes_of(t.parameter_count, t.parameter_type) : 0;
  b.teacher = t.present && !t.offloaded_to_cpu ? teacher_bytes : 0;

  b.saved_activations = r.saved;
  b.after_forward = r.after_forward;
  b.forward_peak = r.forward_peak;
  b.fwd_bwd_peak = r.fwd_bwd_peak;
  b.gradients = r.grads;
  b.optimizer_temporaries = plan.inference ? 0 : optimizer_temporaries(plan, r.totals.largest_trainable, b.trainable_count, plan.optimizer_state_type());
  const auto at_step = checked_add(r.live_after_backward, b.optimizer_temporaries);
  b.step_peak = r.fwd_bwd_peak;
  b.gradients_at_peak = r.grads_at_peak;
  b.peak_record = r.peak_layer;
  b.peak_in_backward = r.peak_in_backward;
  if (at_step > b.step_peak) { b.step_peak = at_step; b.gradients_at_peak = r.grads; b.peak_record = -1; }
  // The teacher runs (no grad) before the student's forward; offloaded, it is brought in first.
  if (t.present) {
    const auto teacher_peak = t.forward_peak_bytes + (t.offloaded_to_cpu ? teacher_bytes : 0);
    if (teacher_peak > b.step_peak) { b.step_peak = teacher_peak; b.gradients_at_peak = 0; b.peak_record = -1; }
  }
  b.step_peak_rounded = r.peak_rounded + (b.step_peak - r.fwd_bwd_peak);

  b.cuda_context = dev.context;
  b.cublas_workspace = dev.cublas_workspace;
  // cuDNN's GEMM-based algorithms stage the unfolded input (cuDNN developer guide,
  // CUDNN_CONVOLUTION_FWD_ALGO_GEMM "needs a significant memory workspace to store the matrix
  // that holds the input data"): budget the largest conv's im2col matrix.
  b.cudnn_workspace = r.totals.largest_im2col;
  b.allocator_rounding = b.step_peak_rounded > b.step_peak ? b.step_peak_rounded - b.step_peak : 0;
  b.fragmentation = checked_mul(checked_add(b.peak_tensor_bytes(), b.allocator_rounding), plan.fragmentation_percent) / 100;
  if (r.allocator.reserved_peak >= 0) fill_allocator_terms(b, r.allocator);  // the allocator model replaces the flat reserve
}

/// What the allocator replay needs from the device: its cuBLAS workspace per handle and the cap
/// a capped run has (capacity less the non-allocator bytes).
constexpr replay_setup replay_setup_for(const device& dev) {
  return replay_setup{.cublas_workspace = dev.cublas_workspace, .cublas_handles = 2, .cap = dev.capacity - dev.context};
}

/// The totals of `m` as `plan` on `dev`, replayed (with training::model_allocator) as `setup` says.
template <std::size_t N>
constexpr memory_budget totals_replayed(const model<N>& m, const training& plan, const device& dev, const replay_setup& setup) {
  memory_budget b{};
  fill_budget(b, simulate_step<N>(m.records, plan, nullptr, nullptr, nullptr, &setup), plan, dev);
  return b;
}

/// budget_totals without the divisibility check (max_micro_batch's probes: `fits_only`, see
/// replay_setup).
template <std::size_t N>
constexpr memory_budget totals_any_micro_batch(const model<N>& m, const training& plan, const device& dev, bool fits_only = false) {
  auto setup = replay_setup_for(dev);
  setup.fits_only = fits_only;
  return totals_replayed(m, plan, dev, setup);
}

}  // namespace detail

/// The budget of `m` trained (or run) as `plan` on `dev`, with per-record detail.
template <std::size_t N>
constexpr model_budget<N> budget(const model<N>& m, const training& plan, const device& dev) {
  detail::check_divides(plan);
  model_budget<N> b{};
  b.records = m.records;
  const auto setup = detail::replay_setup_for(dev);
  const auto r = detail::simulate_step(m.records, plan, &b.per_record, nullptr, nullptr, &setup);
  detail::fill_budget(b, r, plan, dev);
  return b;
}

/// Just the totals (cheaper to carry around: no per-record arrays).
template <std::size_t N>
constexpr memory_budget budget_totals(const model<N>& m, const training& plan, const device& dev) {
  detail::check_divides(plan);
  return detail::totals_any_micro_batch(m, plan, dev);
}

/// A distillation teacher: its parameters and its no-grad forward peak for `micro_batch`.
template <std::size_t N>
constexpr teacher_policy teacher(const model<N>& m, std::int64_t micro_batch, bool offloaded_to_cpu,
                                 precision_mode precision = precision_mode::fp32) {
  training t{};
  t.batch = micro_batch;
  t.inference = true;
  t.precision = precision;
  const auto r = detail::simulate_step<N>(m.records, t, nullptr);
  return teacher_policy{true, offloaded_to_cpu, r.totals.parameter_count, r.forward_peak, types_of(precision).parameters};
}

}  // namespace gpubudget
