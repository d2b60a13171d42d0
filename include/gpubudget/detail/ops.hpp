// gpubudget/detail/ops.hpp — primitive autograd ops that the layer rules are written in.
//
// Each helper states, in PyTorch's terms, what the op allocates, what its autograd node saves
// and what gradient it produces; layer headers (layers/*.hpp) compose them into the exact op
// sequence their PyTorch modules run.
#pragma once
#include <cstdint>

#include <gpubudget/detail/sim.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget::detail {

/// What a layer rule may consult besides its input.
struct layer_ctx {
  sim& s;
  const layer& L;
  std::int32_t param_key = -1;  ///< identity of this layer's weights (shared weights share one)
  bool trainable = true;        ///< its parameters require grad
  bool first_use = true;        ///< parameters counted here (false for later uses of shared weights)
  /// Of a trainable layer, the parts (bit p: part p's weights) a train_only name leaves frozen:
  /// `model.layers.31.self_attn.q_proj` trains part 0 of the attention only.
  std::uint8_t frozen_parts = 0;
  std::int64_t parameter_count = 0;  ///< out: parameter elements this layer owns
  std::int64_t buffer_bytes = 0;  ///< out: non-trainable state (BatchNorm running statistics)
  std::int64_t largest_param = 0; ///< out: elements of its largest single parameter tensor
  std::int32_t parts = 1;         ///< out: parameter keys used (param_key .. param_key + parts - 1)
  std::int64_t conv_workspace = 0;  ///< out: bytes of its largest convolution's im2col matrix (cuDNN GEMM workspace)
  std::int64_t input_bytes = 0;     ///< out: a source's data batch
  std::int64_t adam8bit_state = 0;  ///< out: bitsandbytes 8-bit Adam state of its tensors (per tensor: adam8bit_state_bytes)
  std::int64_t frozen_parameter_count = 0;  ///< out: of parameter_count, the elements of frozen_parts
  /// out: of parameter_count, frozen base weights kept in a type of their own (PEFT's base_layer
  /// under LoRA: bf16, fp16 or quantized) and their bytes
  std::int64_t base_weight_count = 0, base_weight_bytes = 0;
  /// A trainable module kept in a storage type other than the precision's parameter type (PEFT's
  /// modules_to_save copy of a 16-bit base: layers/adapters.hpp run_saved_copy): its type,
  /// and out: of parameter_count, its trainable elements and their bytes.
  bool own_stored_type = false;
  dtype stored_as = dtype::fp32;
  std::int64_t own_type_count = 0, own_type_bytes = 0;
  /// An attention op's LoRA adapters on its projections (attention_adapters, packed; 0: none).
  std::int64_t adapters = 0;

  constexpr bool amp() const { return s.types.autocast; }
  constexpr bool pure16() const { return s.types.pure16; }
  constexpr dtype half_type() const { return s.types.half; }
  /// Storage type of parameters and their gradients (the precision's, or a module's own).
  constexpr dtype param_type() const { return own_stored_type ? stored_as : s.types.parameters; }
  /// Activation type for ops that autocast runs in 16 bit (matmul, conv).
  constexpr dtype matmul_type(dtype in) const { return s.types.matmul(in); }
  /// Activation type for ops autocast runs in fp32 (softmax, layer/group norm, losses).
  /// (A norm reads features: token ids are refused by name, as matmul_type refuses them.)
  constexpr dtype fp32_op_type(dtype in) const { return in == dtype::int64 ? (layer_needs_float_features_not_token_ids(), in) : s.types.fp32_op(in); }
  constexpr bool cpu() const { return s.on_cpu(); }
  /// Storage type of a frozen weight stored as `b` (units.hpp): a quantized model keeps
  /// its unquantized modules in the precision's 16-bit type.
  constexpr dtype stored_type(base_weights b) const {
    if (is_quantized(b) || b == base_weights::half) return half_type();
    switch (b) {
      case base_weights::fp32: return dtype::fp32;
      case base_weights::fp16: return dtype::fp16;
      case base_weights::bf16: return dtype::bf16;
      default: return param_type();
    }
  }

  /// Registers a parameter tensor of `elements` values.
  constexpr void add_param(std::int64_t elements) {
    if (!first_use) return;
    parameter_count = checked_add(parameter_count, elements);
    if (s.log_allocator && !s.parameters_logged) log_parameter(elements);
    if (s.count_adam8bit) adam8bit_state += adam8bit_state_bytes(elements);
    if (elements > largest_param) largest_param = elements;
    // each trainable parameter used in forward gets an AccumulateGrad node, alive with the graph
    if (s.count_host && trainable && elements > 0 && !s.no_grad) s.add_host(s.host.node, s.host_view_bytes);
  }
  /// The allocator replay's record of a parameter tensor: elements in the precision's type, or
  /// bytes of a trainable tensor in a type of its own.
  constexpr void log_parameter(std::int64_t elements) {
    if (own_stored_type && trainable) s.own_type_tensors.push_back(bytes_of(elements, stored_as));
    else s.parameter_tensors.push_back(trainable ? elements : -elements);
  }
  /// Registers a frozen base weight of `elements` values stored in `bytes` (PEFT counts it in
  /// "all params", quantized ones by their unpacked elements; it never trains).
  constexpr void add_frozen_base(std::int64_t elements, std::int64_t bytes) {
    if (!first_use) return;
    parameter_count = checked_add(parameter_count, elements);
    frozen_parameter_count = checked_add(frozen_parameter_count, elements);
    base_weight_count = checked_add(base_weight_count, elements);
    base_weight_bytes = checked_add(base_weight_bytes, bytes);
    if (s.log_allocator && !s.parameters_logged) s.base_weight_tensors.push_back(bytes);
  }
  /// Gradient bytes for `elements` parameter values if this layer trains; `part` tells apart
  /// the weights of different sub-modules of one layer (attention's projections).
  /// `cast`: autocast runs the op on 16-bit copies of these parameters (matmul, conv weights
  /// and biases; not embeddings or norms, which it leaves in fp32). `second`: of `elements`, a
  /// second tensor's (a bias beside its weight, a norm's beta beside its gamma).
  constexpr void param_grads(std::int32_t n, std::int64_t elements, std::int32_t part = 0, bool cast = false, std::int64_t second = 0) {
    if (!trainable) return;
    if (part + 1 > parts) parts = part + 1;
    s.param_grads(n, bytes_of(elements, param_type()), param_key + part, bytes_of(second, param_type()));
    if (cast && amp() && param_type() != half_type()) s.cast_param_grads(n, bytes_of(elements, half_type()), bytes_of(second, half_type()));
  }
  /// Do the weights of `part` train (the layer trains and train_only left the part unfrozen)?
  constexpr bool part_trains(std::int32_t part) const { return trainable && ((frozen_parts >> part) & 1) == 0; }
  /// A context for a sub-module of this layer whose weights use keys from `first_part` on.
  constexpr layer_ctx sub(std::int32_t first_part, bool counts = true) const {
    layer_ctx c{s, L, param_key < 0 ? -1 : param_key + first_part, trainable, first_use && counts,
                static_cast<std::uint8_t>(first_part < 8 ? frozen_parts >> first_part : 0)};  // parts past the mask's 8 bits: none frozen
    return c;
  }
  /// Folds a sub-module's counts back into this layer.
  constexpr void absorb(const layer_ctx& c, std::int32_t first_part) {
    parameter_count = checked_add(parameter_count, c.parameter_count);
    adam8bit_state += c.adam8bit_state;
    frozen_parameter_count += c.frozen_parameter_count;
    base_weight_count += c.base_weight_count, base_weight_bytes += c.base_weight_bytes;
    own_type_count += c.own_type_count, own_type_bytes += c.own_type_bytes;
    buffer_bytes += c.buffer_bytes;
    if (c.largest_param > largest_param) largest_param = c.largest_param;
    if (first_part + c.parts > parts) parts = first_part + c.parts;
    if (c.conv_workspace > conv_workspace) conv_workspace = c.conv_workspace;
  }
  /// Does an op with these weights need an autograd node?
  constexpr bool records(const value& x) const { return (x.requires_grad || trainable) && !s.no_grad; }
};

/// y = f(x, w) elementwise with a learned weight `w` of `weights` elements broadcast over x
/// (ConvNeXt's layer scale, PReLU): a new x-sized tensor; the node keeps x when `keep_input`;
/// when w trains, its gradient is x-sized before the engine sums it to w's shape (a backward
/// temporary). The caller has added w (add_param).
constexpr value broadcast_weighted(layer_ctx& c, const value& x, std::int64_t weights, bool keep_input) {
  value y = c.s.make(x.s, x.type, c.records(x));
  auto n = c.s.record(y);
  if (keep_input) c.s.save(n, x);
  c.s.grad_to(n, x);
  c.param_grads(n, weights);
  if (c.trainable) c.s.backward_temp(n, c.s.bytes_of_value(x));
  return y;
}

/// Runs `op(ctx)` for the sub-module of a layer whose weights are part `part` (attention's
/// q_proj): with `c` itself, or, when a train_only name leaves that part frozen (frozen_parts),
/// with a frozen context: no gradient for its weights, no optimizer state, its input saved only
/// when that input needs a gradient (PyTorch's rule for any frozen module); its parameters
/// count into `c` as frozen ones.
template <class Op>
constexpr value on_part(layer_ctx& c, std::int32_t part, Op op) {
  if (!((c.frozen_parts >> part) & 1)) return op(c);
  layer_ctx frozen = c.sub(0);
  frozen.trainable = false;
  value y = op(frozen);
  c.parameter_count = checked_add(c.parameter_count, frozen.parameter_count);
  c.frozen_parameter_count = checked_add(c.frozen_parameter_count, frozen.parameter_count);
  c.base_weight_count += frozen.base_weight_count, c.base_weight_bytes += frozen.base_weight_bytes;
  if (frozen.conv_workspace > c.conv_workspace) c.conv_workspace = frozen.conv_workspace;
  return y;
}

/// Casts `x` to `t` as autocast does (a copy with its own node), or returns another reference.
constexpr value cast_to(sim& s, const value& x, dtype t) {
  if (x.type == t || x.type == dtype::int64) { s.retain(x.id); return x; }
  value y = s.make(x.s, t, x.requires_grad);
  y.strided = x.strided, y.transposed = x.transposed;  // .to() preserves the strides of a dense tensor
  auto n = s.record(y);
  s.grad_to(n, x);
  return y;
}

/// The autocast cache's 16-bit copy of a weight, made before the op's input cast and output:
/// autocast casts the arguments (the bias, the weight, then the input), then the op runs
/// (`cuda-h200/tv_convnext_tiny_b32_224_bf16.json.gz` events 228-232: a Linear's 768 B bias,
/// 73,728 B weight, 19,267,584 B input, then its output; VGG16 AMP fp16 b305: each conv's weight,
/// output, cuDNN workspace; op_rules.md A21). The bias's copy (`bias_elements`) comes first and
/// the cache holds it until the forward ends too (no backward formula saves it). The weight copy's
/// id, or -1 when there is none.
constexpr std::int32_t autocast_weight_copy(layer_ctx& c, std::int64_t elements, std::int64_t bias_elements = 0) {
  if (!c.amp() || elements == 0 || c.param_type() == c.half_type()) return -1;  // a 16-bit weight: .to() is a no-op
  if (bias_elements > 0) {
    const auto bias_bytes = bytes_of(bias_elements, c.half_type());
    c.s.cache_until_forward_ends(c.s.allocate(bias_bytes, false, -1, bias_bytes));
  }
  const auto bytes = bytes_of(elements, c.half_type());
  return c.s.allocate(bytes, false, -1, bytes);
}

/// The copy (autocast_weight_copy) alive until the forward ends, saved by the op when the op must
/// compute its input's gradient (grad_input = grad_output · W), or always (`saved_always`:
/// convolution_backward takes it either way).
constexpr void keep_autocast_weight(layer_ctx& c, std::int32_t n, const value& x, std::int32_t copy, bool saved_always) {
  if (copy < 0) return;
  if (x.requires_grad || saved_always) c.s.save(n, value{copy, {}, c.half_type(), false});
  c.s.cache_until_forward_ends(copy);
}

/// One fp32 GEMM C[m, n] = A[m, k] · B[k, n] of row-major operands, each contiguous or read
/// transposed (a transposed view, or Wᵀ in a Linear's forward).
struct gemm_shape {
  std::int64_t m = 0, n = 0, k = 0;
  bool a_transposed = false, b_transposed = false;
};

/// A 16-bit GEMM on the CPU (2.6). With AVX512 oneDNN runs it and holds nothing (2.6 #9 "bf16: no
/// OpenBLAS part", #34). Without (training::cpu_capability avx2) oneDNN declines, and C = Aᵀ·B of
/// row-major operands — a Linear's weight gradient, gradᵀ·x — runs in OpenBLAS's sbgemm, whose C is
/// fp32: PyTorch's CPUBlas copies C into floats and back, m·n·4 bytes for the call; the other
/// three layouts hold nothing (op_rules.md 2.6 #82, measured on an AMD EPYC: [32000, 256] from
/// 128 rows, 32,768,840 B beside the bf16 result; fp16 the same).
constexpr std::int64_t cpu_half_gemm_copy(cpu_isa capability, const gemm_shape& g) {
  if (capability != cpu_isa::avx2 || !g.a_transposed || g.b_transposed) return 0;
  return checked_mul(checked_mul(g.m, g.n), 4);
}

/// OpenBLAS's GEMM buffer: a constant transient in forward and in each backward GEMM. 1.13's
/// OpenBLAS 0.3.21: 512 KiB once m·n·k > 64³ (op_rules.md §0.4). 2.6's OpenBLAS 0.3.29
/// (DYNAMIC_ARCH, MAX_THREADS=128): the threaded level-3 driver's job table, 128 jobs of
/// 128 × 16 words = 2 MiB, malloc'ed per call (driver/level3/level3_thread.c, USE_ALLOC_HEAP),
/// entered when interface/gemm.c gives the call two threads, m·n·k ≥ 2 × 65536 × 4 = 2^19
/// (op_rules.md 2.6 #43), unless the small-matrix kernel takes it first: up to m·n·k = 10^6,
/// kernel/x86_64/sgemm_small_kernel_permit_skylakex.c (the Cooperlake core this machine's
/// OpenBLAS picks) permits every call whose BLAS transa is clear, and otherwise one with transb
/// set and k ≥ 4, or m·n ≤ 1200 and k ≥ 32. PyTorch hands the row-major product to column-major
/// BLAS as Cᵀ = Bᵀ·Aᵀ: BLAS's transa is B's layout, its transb A's (2.6 #59: a Linear's forward
/// (x·Wᵀ) at 2 × 256 × 1152 holds none, its backward none up to 10^6; bmm's per matrix). A
/// 16-bit GEMM (`t`: its output type; CPU autocast bf16) holds no OpenBLAS buffer: cpu_half_gemm_copy.
/// `rules`, `capability`: the plan's (training::rules(), cpu_capability).
constexpr std::int64_t cpu_gemm_buffer(runtime_kind rules, cpu_isa capability, const gemm_shape& g, dtype t) {
  if (backend_of(rules) != backend_kind::cpu) return 0;
  if (t == dtype::bf16 || t == dtype::fp16) return cpu_half_gemm_copy(capability, g);
  const auto product = checked_mul(checked_mul(g.m, g.n), g.k);
  if (rules != runtime_kind::torch2_6_cpu) return product > 64 * 64 * 64 ? 512 * KiB : 0;
  if (product < 524288) return 0;
  const bool blas_transa = g.b_transposed, blas_transb = g.a_transposed;
  const bool small_kernel = product <= 1000000 && (!blas_transa || (blas_transb ? g.k >= 4 : g.m * g.n <= 1200 && g.k >= 32));
  return small_kernel ? 0 : 2 * MiB;
}
constexpr std::int64_t cpu_gemm_buffer(const sim& s, const gemm_shape& g, dtype t) { return cpu_gemm_buffer(s.rules, s.plan.cpu_capability, g, t); }

/// The GEMM buffers of nn.Linear(in, out) on `rows` rows: forward x·Wᵀ, backward grad·W and,
/// when the weight trains, gradᵀ·x (one at a time: the larger).
struct linear_gemm_buffers {
  std::int64_t forward = 0, backward = 0;
};
constexpr linear_gemm_buffers cpu_linear_gemm_buffers(const sim& s, std::int64_t rows, std::int64_t out, std::int64_t in, dtype t, bool weight_trains) {
  if (!s.on_cpu()) return {};
  const auto grad_input = cpu_gemm_buffer(s, {rows, in, out, false, false}, t);
  const auto grad_weight = weight_trains ? cpu_gemm_buffer(s, {out, in, rows, true, false}, t) : 0;
  return {cpu_gemm_buffer(s, {rows, out, in, false, true}, t), grad_input > grad_weight ? grad_input : grad_weight};
}

/// CUDA's reduction kernel (ATen/native/cuda/Reduce.cuh, setReduceConfig) summing a contiguous
/// [rows, cols] gradient over its rows (a Linear bias's gradient: the autograd engine's sum_to of
/// AddmmBackward's full-size grad) stages partial sums in a global buffer when each thread would
/// sum >= 256 values: 4 B (float accumulator) x cols x ctas_per_output x block.x x output_vec_size.
/// Outputs vectorized by 4 (get_output_vec_size), 512 / 4 threads: block 32 x 4; the grid fills
/// 132 SMs x (2048 / 128) blocks (the H100's multiprocessors, the CUDA file's environment).
/// op_rules.md CT6: vit_b_16_b16_224_bf16_foreach, sum_to of [3152, 3072]: 78643200 B.
constexpr std::int64_t cuda_row_sum_workspace(const sim& s, std::int64_t rows, std::int64_t cols) {
  // per thread >= 256 values: the block has >= 4 rows of threads (below), so > 1020 rows
  if (s.on_cpu() || rows <= 1020 || cols <= 0) return 0;
  constexpr std::int64_t sms = 132, threads_per_sm = 2048, max_threads = 512;
  std::int64_t vec = 4;
  while (cols % vec != 0) vec /= 2;
  auto pow2_below = [](std::int64_t n) { std::int64_t p = 1; while (p * 2 <= n) p *= 2; return p; };
  const std::int64_t limit = max_threads / vec, outputs = cols / vec;
  const std::int64_t d0 = outputs < limit ? pow2_below(outputs) : limit, d1 = rows < limit ? pow2_below(rows) : limit;
  std::int64_t width = d0 < 32 ? d0 : 32;
  const std::int64_t height = d1 < limit / width ? d1 : limit / width;
  width = d0 < limit / height ? d0 : limit / height;
  const std::int64_t warp_split = height * 16 < 256 ? height * 16 : 256;
  if (rows < warp_split) return 0;  // each warp sums its own outputs: no global reduction
  const std::int64_t per_thread = (rows + height - 1) / height, grid = (outputs + width - 1) / width;
  const std::int64_t target = sms * (threads_per_sm / (width * height));
  if (per_thread < 256 || grid > target) return 0;
  const std::int64_t by_grid = (target + grid - 1) / grid, by_min = (per_thread + 15) / 16, by_max = (per_thread + 255) / 256;
  const std::int64_t ctas = (by_grid < by_min ? by_grid : by_min) > by_max ? (by_grid < by_min ? by_grid : by_min) : by_max;
  return ctas > 1 ? checked_mul(checked_mul(4 * cols, ctas), width * vec) : 0;
}

/// The backward transient of a trained Linear bias's gradient on CUDA (cuda_row_sum_workspace;
/// op_rules.md CT6). `y`: the Linear's output, `cols` its features.
constexpr void bias_grad_workspace(layer_ctx& c, const value& y, std::int64_t cols) {
  if (!c.trainable || c.cpu()) return;
  const auto rows = c.s.storages.data_[(y.id)].bytes / checked_mul(cols, bytes_per_element(y.type));
  c.s.backward_temp(c.s.record_of(y), cuda_row_sum_workspace(c.s, rows, cols));
}

enum class keeps : std::uint8_t { nothing, input, output };

/// y = f(x): a new tensor; the node keeps nothing, the input or the output; the gradient of x is
/// a new tensor of x's size.
constexpr value pointwise(sim& s, const value& x, const shape& out, dtype t, keeps k,
                          std::int64_t extra_saved = 0, std::int64_t forward_temp = 0, std::int64_t backward_temp = 0) {
  value y = s.make(out, t, x.requires_grad);
  if (forward_temp) s.transient(forward_temp);
  auto n = s.record(y);
  if (k != keeps::nothing) s.save(n, k == keeps::input ? x : y);
  if (extra_saved) s.save_new(n, extra_saved);
  s.grad_to(n, x);
  if (backward_temp) s.backward_temp(n, backward_temp);
  return y;
}

/// An activation whose backward reads its input (GELU, SiLU, ELU, LeakyReLU, Hardswish, ReLU6
/// out of place; derivatives.yaml): a new tensor, the node keeps the input.
constexpr value keep_input_activation(sim& s, const value& x) { return pointwise(s, x, x.s, x.type, keeps::input); }

/// An activation whose backward reads its output (ReLU, sigmoid, tanh, exp): a new tensor, the
/// node keeps the output.
constexpr value keep_output_activation(sim& s, const value& x) { return pointwise(s, x, x.s, x.type, keeps::output); }

/// Softmax over the last dimension as autocast runs it: in fp32 (a cast copy under AMP), the
/// node keeps its output. Returns the fp32 (or input-typed) probabilities.
constexpr value softmax_op(sim& s, const value& x) {
  value xin = cast_to(s, x, s.types.fp32_op(x.type));
  value y = keep_output_activation(s, xin);
  s.release(xin);
  return y;
}

/// Softmax feeding a matmul (attention): the fp32 softmax, then the cast back to the matmul type
/// `mt` that the next bmm saves (6 bytes per score under AMP fp16, not 2).
constexpr value softmax_for_matmul(sim& s, const value& scores, dtype mt) {
  value p = softmax_op(s, scores);
  value p16 = cast_to(s, p, mt);
  s.release(p);
  return p16;
}

/// nn.Dropout(percent/100) in training: CUDA's native_dropout keeps a 1-byte bool mask; the CPU
/// path multiplies by an input-typed noise tensor and MulBackward keeps that. Identity at p = 0
/// and under no_grad (eval). Returns a new reference.
constexpr value dropout_op(sim& s, const value& x, std::int64_t percent) {
  if (percent <= 0 || s.no_grad) { s.retain(x.id); return x; }
  const auto elements = checked_mul(s.batch, x.s.numel());
  const dtype kept = s.on_cpu() ? x.type : dtype::boolean;  // 1.13 and 2.6 alike (op_rules.md 2.6 #13)
  return pointwise(s, x, x.s, x.type, keeps::nothing, bytes_of(elements, kept));
}

/// A sum over some dimensions: a new, smaller tensor; its backward hands back an expanded view
/// of the gradient (nothing allocated, the consumer materializes what it needs).
constexpr value reduce(sim& s, const value& x, const shape& out) {
  value y = s.make(out, x.type, x.requires_grad);
  auto n = s.record(y);
  s.grad_to(n, x, false, true);
  return y;
}

/// mean(dim): keeps its input in PyTorch 1.13 (its derivative reads self.numel()), nothing in
/// 2.x on any device (op_rules.md 2.6 #2: x[4,64,256] saved 256K -> 0; 2.x's derivatives.yaml
/// formula reads only self.sym_sizes() and self.sym_numel(), saved as integers). Its backward,
/// grad.expand(sizes) / n, allocates an input-sized gradient.
constexpr value mean_reduce(sim& s, const value& x, const shape& out) {
  return pointwise(s, x, out, x.type, s.torch2() ? keeps::nothing : keeps::input);
}

/// x.var(dims) / x.std(dims): a new reduced tensor; VarBackward0 keeps x, StdBackward0 x and its
/// result (derivatives.yaml var.correction / std.correction). Backward, var_backward's
/// (2 / dof) * grad * (x - x.mean(dims, true)) holds x - mean beside x's gradient (2.6 CPU probe:
/// [2, 256, 512] fp32 over the last dimension, and [2, 64, 32, 64] over two, peak 2 x).
constexpr value deviation_reduce(sim& s, const value& x, const shape& out, bool keeps_result) {
  value y = s.make(out, x.type, x.requires_grad);
  const auto n = s.record(y);
  s.save(n, x);
  if (keeps_result) s.save(n, y);
  s.grad_to(n, x);
  s.backward_temp(n, s.bytes_of_value(x));
  return y;
}

/// x * scalar, x / scalar (a Python number): 1.13 keeps the scalar as a 0-d fp64 tensor (8 B);
/// 2.x keeps nothing (op_rules.md 2.6 #5: mul.Scalar / div.Scalar in derivatives.yaml keep the
/// Scalar, not a tensor; any device). Bytes the node saves.
constexpr std::int64_t scalar_operand_saved(const sim& s) { return s.torch2() ? 0 : 8; }

/// Dropout on attention probabilities `p` ([.., L, L], materialized attention: GPT-2's
/// attn_pdrop, BERT's attention_probs_dropout_prob, nn.MultiheadAttention(dropout=...)): the
/// softmax keeps its output, the dropout its mask, the next bmm the dropped probabilities:
/// 3 x [B,H,L,L] instead of 1 x (op_rules.md 2.6 #14, the same in 1.13: gpt2_small_drop -
/// gpt2_small_residdrop = 12 layers x 2 x [2,12,128,128] fp32). Returns a new reference.
constexpr value attention_probs_dropout(sim& s, const value& p, std::int64_t percent) { return dropout_op(s, p, percent); }

/// a / b with b broadcast over a (F.normalize's x / norm, a LayerNorm written out): a new `t`
/// tensor; DivBackward0 keeps both. It computes the broadcast denominator's gradient first,
/// -grad * ((a / b) / b) (FunctionsManual.cpp div_tensor_other_backward): four a-sized tensors at
/// once (a / b, / b, -grad, the product) before the sum to b's shape; a's gradient grad / b comes
/// after them. The walk counts a node's temporaries beside its gradients: three more than a's
/// gradient (trace_peak.py metric_embedding_b2_64, ops 75-79: the step's peak, 4 x [2,64,32,32] fp32).
/// When b has a's shape the product is b's gradient itself: two more (2.6 CPU probe, [2, 256, 512]
/// fp32 / [2, 256, 512]: backward's peak 4 x, as with b [2, 256, 1]).
constexpr value broadcast_divide(sim& s, const value& a, const value& b, dtype t) {
  value y = s.make(a.s, t, a.requires_grad || b.requires_grad);
  const auto n = s.record(y);
  // a's gradient reads b; b's reads a and b (derivatives.yaml div.Tensor): a is kept only for b's
  if (b.requires_grad) s.save(n, a);
  s.save(n, b);
  s.grad_to(n, a), s.grad_to(n, b);
  if (b.requires_grad) s.backward_temp(n, checked_mul(b.s.numel() == a.s.numel() ? 2 : 3, s.bytes_of_value(a.s, t)));
  return y;
}

/// The type of an elementwise result of two operands (TensorIterator's promotion among the
/// floating types the walk uses): fp32 when either is, else the first's.
constexpr dtype promoted_type(dtype a, dtype b) { return a == dtype::fp32 || b == dtype::fp32 ? dtype::fp32 : a; }

/// a + b (out of place): saves nothing, passes the gradient through to both.
constexpr value add(sim& s, const value& a, const value& b) {
  value y = s.make(a.s, promoted_type(a.type, b.type), a.requires_grad || b.requires_grad);
  // TensorIterator lays the sum out like its first operand whose strides decide: torchvision's
  // EncoderBlock writes both residuals with the transposed operand first (x + input, x + y), so
  // a transposed operand makes the sum transposed (op_rules.md CT10)
  y.strided = a.strided || b.strided;
  auto n = s.record(y);
  s.grad_to(n, a, true);
  s.grad_to(n, b, true);
  return y;
}

/// a - b (out of place): keeps nothing; a gets the gradient, b its negation (a new tensor).
constexpr value subtract(sim& s, const value& a, const value& b) {
  const value y = s.make(a.s, promoted_type(a.type, b.type), a.requires_grad || b.requires_grad);
  const auto n = s.record(y);
  s.grad_to(n, a, true);
  s.grad_to(n, b);
  return y;
}

/// A 4-byte scalar made by node kinds that keep nothing (a sum, a product with a number, the sum
/// of two losses) from `a` (and `b`), passing them its gradient (`expanded`: to `a` as sum's
/// grad.expand(sizes), a view of the scalar's).
constexpr value scalar_of(sim& s, const value& a, const value& b = value{}, bool expanded = false) {
  const value y{s.allocate(4, false, -1, 4), {}, dtype::fp32, a.requires_grad || b.requires_grad};
  const auto n = s.record(y);
  s.grad_to(n, a, true, expanded);
  if (b.id >= 0) s.grad_to(n, b, true);
  return y;
}

/// a += b: `a`'s storage holds the sum (no allocation); the gradient passes through to both.
/// Takes over the caller's reference to `a`.
constexpr value add_inplace(sim& s, const value& a, const value& b) {
  value y{a.id, a.s, a.type, a.requires_grad || b.requires_grad, a.strided};
  auto n = s.record(y);
  s.grad_to(n, a, true);
  s.grad_to(n, b, b.s.numel() == a.s.numel());  // a broadcast b: its own gradient, summed to its size (op_rules.md 2.6 #68)
  return y;
}

/// a * b elementwise (same shape): saves each operand the other's gradient needs.
constexpr value multiply(sim& s, const value& a, const value& b, const shape& out) {
  value y = s.make(out, promoted_type(a.type, b.type), a.requires_grad || b.requires_grad);
  auto n = s.record(y);
  if (b.requires_grad) s.save(n, a);
  if (a.requires_grad) s.save(n, b);
  s.grad_to(n, a);
  s.grad_to(n, b);
  return y;
}

/// a * b where `b` is broadcast over `out` (its gradient is computed at full size, then reduced).
constexpr value broadcast_multiply(sim& s, const value& a, const value& b, const shape& out) {
  value y = multiply(s, a, b, out);
  if (b.requires_grad) s.backward_temp(s.record_of(y), s.bytes_of_value(out, y.type));
  return y;
}

/// A copy that makes a view contiguous (`.contiguous()`, or `reshape` of a non-viewable view).
constexpr value copy(sim& s, const value& x, const shape& out) {
  value y = s.make(out, x.type, x.requires_grad);
  auto n = s.record(y);
  s.grad_to(n, x, true);  // CloneBackward hands the gradient on unchanged
  return y;
}

/// Batched matmul a @ b producing `out`, each of its matrices the GEMM `g` (one OpenBLAS call
/// each, so the CPU buffer follows one matrix's product: 2.6 #59): saves both operands (as
/// given: views keep their base). Backward: grad·bᵀ for a, aᵀ·grad for b.
constexpr value bmm(sim& s, const value& a, const value& b, const shape& out, dtype t, const gemm_shape& g) {
  value y = s.make(out, t, a.requires_grad || b.requires_grad);
  const auto gemm = cpu_gemm_buffer(s, g, t);
  s.transient(gemm, true);
  auto n = s.record(y);
  s.note_cublas_call();
  const auto grad_a = a.requires_grad ? cpu_gemm_buffer(s, {g.m, g.k, g.n, false, !g.b_transposed}, t) : 0;
  const auto grad_b = b.requires_grad ? cpu_gemm_buffer(s, {g.k, g.n, g.m, !g.a_transposed, false}, t) : 0;
  s.backward_temp(n, grad_a > grad_b ? grad_a : grad_b, true);
  if (b.requires_grad) s.save(n, a);
  if (a.requires_grad) s.save(n, b);
  s.grad_to(n, a);
  s.grad_to(n, b);
  return y;
}

/// An op with parameters (linear, conv, norm): output, what it saves, parameter gradients.
/// `saves_input` is whether the node keeps its input (needed for the weight's gradient).
/// Under autocast `cast_weight_elements` of the parameters run as a cached 16-bit copy, which the
/// node keeps when the input needs a gradient, or always with `weight_saved_always`; `weight_copy`:
/// that copy, which the caller makes before casting the input, as autocast does
/// (autocast_weight_copy; -1: none).
/// `second_elements` of `param_elements` are a second tensor (the bias): a .grad of its own.
constexpr value with_params(layer_ctx& c, const value& x, const shape& out, dtype t, std::int64_t param_elements,
                            bool saves_input, std::int64_t extra_saved = 0, std::int64_t forward_temp = 0,
                            std::int64_t backward_temp = 0, std::int64_t cast_weight_elements = 0,
                            std::int32_t part = 0, bool weight_saved_always = false, std::int64_t second_elements = 0,
                            std::int32_t weight_copy = -1) {
  auto& s = c.s;
  value y = s.make(out, t, c.records(x));
  if (forward_temp) s.transient(forward_temp);
  auto n = s.record(y);
  if (saves_input) s.save(n, x);
  if (extra_saved) s.save_new(n, extra_saved);
  keep_autocast_weight(c, n, x, weight_copy, weight_saved_always);
  s.grad_to(n, x);
  c.param_grads(n, param_elements, part, cast_weight_elements != 0, second_elements);
  if (backward_temp) s.backward_temp(n, backward_temp);
  return y;
}

/// x + p for a parameter p (bias, positions, a class token's cat): a new tensor, nothing
/// saved; the gradient passes to x and is summed into p's .grad. Type promotion, as `add`: a
/// 16-bit x (an autocast conv's output) with an fp32 parameter gives fp32 (torchvision ViT's
/// class-token cat: its residual stream is fp32 under autocast, op_rules.md 2.6 #40).
constexpr value add_parameter(layer_ctx& c, const value& x, const shape& out, std::int64_t elements, std::int32_t part) {
  c.add_param(elements);
  value y = c.s.make(out, c.param_type() == dtype::fp32 ? dtype::fp32 : x.type, c.records(x));
  auto n = c.s.record(y);
  c.s.grad_to(n, x, true);
  c.param_grads(n, elements, part);
  return y;
}

/// nn.Linear(in, out) applied to `x` (any rank): casts under autocast, saves the input when the
/// weight trains. `tied`: the weight belongs to another layer (counted there).
constexpr value linear_op(layer_ctx& c, const value& x, std::int64_t out_features, bool bias, std::int32_t part = 0,
                          bool tied = false) {
  // (one test on the common path; a per-sample scalar has no feature dimension)
  if (out_features <= 0 || x.s.rank < 1) out_features <= 0 ? invalid_layer_argument() : tensor_rank_unsupported();
  const std::int64_t weight = checked_mul(x.s.last(), out_features);
  const std::int64_t b = bias ? out_features : 0;
  if (!tied) { c.add_param(weight); c.add_param(b); }
  shape out = x.s;
  out[-1] = out_features;
  const auto weight_copy = autocast_weight_copy(c, weight, b);  // autocast casts the bias and weight, then the input
  value xin = cast_to(c.s, x, c.matmul_type(x.type));
  const auto gemm = cpu_linear_gemm_buffers(c.s, checked_mul(c.s.batch, x.s.numel() / x.s.last()), out_features, x.s.last(), c.matmul_type(x.type), c.trainable);
  value y = with_params(c, xin, out, c.matmul_type(x.type), weight + b, /*saves_input=*/c.trainable, 0, gemm.forward, gemm.backward, weight, part,
                        /*weight_saved_always=*/false, /*second_elements=*/b, weight_copy);
  c.s.note_cublas_call();
  // (an output of > 1020 rows of >= 2 B has > 2040 B per output column: one test on the common path)
  if (b > 0 && c.s.storages.data_[(y.id)].bytes > 2040 * out_features) bias_grad_workspace(c, y, out_features);
  c.s.release(xin);
  if (c.s.count_host && y.requires_grad) {  // AddmmBackward's TBackward and the weight view
    auto n = c.s.record_of(y);
    if (n >= 0 && c.s.replay_cursor < 0) c.s.add_host(c.s.host.node + c.s.host.view_node, c.s.node(n).host_bytes);
  }
  return y;
}

}  // namespace gpubudget::detail
