// gpubudget/layers/elementwise.hpp — per-channel scaling, constant scaling and stochastic depth.
#pragma once
#include <gpubudget/detail/op_record.hpp>

namespace gpubudget {

/// ConvNeXt's layer scale: x * gamma with a learned gamma of one value per channel (dimension 0:
/// torchvision's (C, 1, 1) on [C, H, W]; `last_dimension`: the official ConvNeXt's (C,) on a
/// channels-last [H, W, C], or on tokens [N, C]). The product keeps x (gamma's gradient needs it).
struct layer_scale_op {
  flag last_dimension = {};
  flag scalar = {};  ///< one learned value for the whole tensor (scalar_gain)
};

template <>
struct op_traits<layer_scale_op> {
  static constexpr const char* name = "layer_scale";
  static constexpr detail::value lower(detail::layer_ctx& c, const layer_scale_op& op, const detail::value& x) {
    const auto ch = op.scalar ? 1 : op.last_dimension ? x.s.last() : x.s[0];
    c.add_param(ch);
    return detail::broadcast_weighted(c, x, ch, c.trainable);  // only gamma's gradient reads x
  }
};

constexpr layer layer_scale(bool last_dimension = false) { return as_layer(layer_scale_op{last_dimension, false}); }

/// x * gamma with one learned scalar, `nn.Parameter(torch.zeros(1))` (SAGAN's self-attention
/// `self.gamma * out + x`): MulBackward0 keeps x for gamma's gradient, which it computes at x's
/// size before summing it, as for layer_scale.
constexpr layer scalar_gain() { return as_layer(layer_scale_op{false, true}); }

/// x + beta with a learned beta of one value per channel (dimension 0, a (C, 1, 1) parameter on
/// [C, H, W]; `last_dimension`: a (C,) parameter on [..., C], the bias of a LayerNorm written
/// out, `self.a_2 * (x - mean) / (std + eps) + self.b_2`): AddBackward0 keeps nothing, x's
/// gradient passes through, beta's is summed from it.
struct learned_bias_op {
  flag last_dimension = {};
};

template <>
struct op_traits<learned_bias_op> {
  static constexpr const char* name = "learned_bias";
  static constexpr detail::value lower(detail::layer_ctx& c, const learned_bias_op& op, const detail::value& x) {
    if (x.s.rank < 1) detail::tensor_rank_unsupported();
    return detail::add_parameter(c, x, x.s, op.last_dimension ? x.s.last() : x.s[0], 0);
  }
};

constexpr layer learned_bias(bool last_dimension = false) { return as_layer(learned_bias_op{last_dimension}); }

/// Stochastic depth ("row" mode) with drop probability `per_mille`/1000: in training, the
/// input times a per-sample Bernoulli noise [B, 1, ...]; the product keeps only the noise.
/// Probability 0 is the identity.
struct stochastic_depth_op {
  std::int64_t per_mille = {};
};

template <>
struct op_traits<stochastic_depth_op> {
  static constexpr const char* name = "stochastic_depth";
  static constexpr detail::value lower(detail::layer_ctx& c, const stochastic_depth_op& op, const detail::value& x) {
    if (op.per_mille < 0 || op.per_mille > 1000) detail::invalid_layer_argument();
    if (op.per_mille == 0 || c.s.no_grad) { c.s.retain(x.id); return x; }
    return detail::pointwise(c.s, x, x.s, x.type, detail::keeps::nothing, checked_mul(c.s.batch, 4));
  }
};

constexpr layer stochastic_depth(std::int64_t per_mille) { return as_layer(stochastic_depth_op{per_mille}); }

/// Multiplies by a constant (`x * c`): a new tensor, nothing saved. `identity`: a scale that a
/// model's configuration leaves out (the record stays, so the model's record count does not
/// depend on the configuration): x itself.
struct scale_op {
  flag identity = {};
  /// transformers' rotary models compute their cos/sin tables here, after the (scaled) embedding:
  /// `inv_freq @ position_ids`, the forward's first cuBLAS call (its workspace: op_rules.md A3)
  flag rotary_tables_follow = {};
  /// the multiplier is a Python number (Granite's embedding_multiplier), not a 0-dim tensor:
  /// MulBackward0 keeps nothing
  flag by_number = {};
};

template <>
struct op_traits<scale_op> {
  static constexpr const char* name = "scale";
  static constexpr detail::value lower(detail::layer_ctx& c, const scale_op& op, const detail::value& x) {
    if (op.rotary_tables_follow) c.s.note_cublas_call();
    if (op.identity) { c.s.retain(x.id); return x; }
    // Gemma's embedding scale multiplies by a 0-dim tensor (GemmaModel's torch.tensor(normalizer,
    // dtype), made on the CPU; Gemma 3's embed_scale buffer), which MulBackward0 keeps for the
    // embedding's gradient: one element more saved, a new allocation only on the CPU backend
    const bool scalar_kept = op.rotary_tables_follow && !op.by_number && c.s.on_cpu();
    return detail::pointwise(c.s, x, x.s, x.type, detail::keeps::nothing, scalar_kept ? bytes_of(1, x.type) : 0);
  }
};

constexpr layer scale() { return as_layer(scale_op{}); }

/// The elementwise math a model writes by hand (torch.exp, x.log(), x ** 2, x.clamp(min=c), -x):
/// what autograd keeps is derivatives.yaml's (measured on the 2.6 CPU with saved_tensors_hooks,
/// op_rules.md 2.6 #62): the output for exp, sqrt, rsqrt and reciprocal; the input for log, abs,
/// pow by a number, clamp by numbers, sin and cos; nothing for neg. CUDA autocast runs exp, log,
/// pow, reciprocal and rsqrt in fp32 (autocast_mode.cpp's fp32 list; CPU autocast keeps the input's
/// type, measured): a 16-bit input's fp32 copy is what they keep.
enum class unary_fn : std::int64_t { exp, log, sqrt, rsqrt, reciprocal, abs, neg, pow, clamp, sin, cos };

struct elementwise_op {
  unary_fn fn = {};
  constexpr detail::keeps kept() const {
    switch (fn) {
      case unary_fn::exp: case unary_fn::sqrt: case unary_fn::rsqrt: case unary_fn::reciprocal: return detail::keeps::output;
      case unary_fn::neg: return detail::keeps::nothing;
      default: return detail::keeps::input;
    }
  }
  constexpr bool on_cuda_fp32_list() const {
    return fn == unary_fn::exp || fn == unary_fn::log || fn == unary_fn::pow || fn == unary_fn::reciprocal || fn == unary_fn::rsqrt;
  }
};

template <>
struct op_traits<elementwise_op> {
  static constexpr const char* name = "elementwise";
  static constexpr detail::value lower(detail::layer_ctx& c, const elementwise_op& op, const detail::value& x) {
    if (op.fn < unary_fn::exp || op.fn > unary_fn::cos) detail::invalid_layer_argument();
    const detail::value xin = op.on_cuda_fp32_list() ? detail::cast_to(c.s, x, c.fp32_op_type(x.type)) : (c.s.retain(x.id), x);
    // AbsBackward0 is grad * self.sgn(): the sign, input-sized, beside the gradient (trace_peak.py
    // difference_cnn_b2_64, ops 54-55); the other formulas' temporaries are not modelled (#62)
    const auto sign = op.fn == unary_fn::abs ? c.s.bytes_of_value(xin) : 0;
    detail::value y = detail::pointwise(c.s, xin, xin.s, xin.type, op.kept(), 0, 0, sign);
    c.s.release(xin);
    return y;
  }
  static constexpr std::int64_t flops(const elementwise_op&, const shape&, const shape& out) { return out.numel(); }
};

constexpr layer elementwise(unary_fn fn) { return as_layer(elementwise_op{fn}); }

/// GPT-2's `gelu_new` as transformers' NewGELUActivation and minGPT's NewGELU write it,
/// 0.5·x · (1 + tanh(√(2/π)·(x + 0.044715·x³))): eight ops, each keeping what its derivative reads
/// (op_rules.md 2.6 #65): pow its input, tanh its output, the last product both of its factors
/// (0.5·x and 1 + tanh): three x-sized tensors more than gelu()'s (F.gelu keeps x alone). Under
/// CUDA autocast pow runs on an fp32 copy of x (autocast's fp32 list) and the sum, tanh, 1 + tanh
/// and the product follow in fp32; 0.5·x stays 16-bit.
struct gelu_new_op {};

template <>
struct op_traits<gelu_new_op> {
  static constexpr const char* name = "gelu_new";
  static constexpr detail::value lower(detail::layer_ctx& c, const gelu_new_op&, const detail::value& x) {
    auto& s = c.s;
    using detail::keeps;
    const detail::value x32 = detail::cast_to(s, x, c.fp32_op_type(x.type));
    const detail::value cube = detail::pointwise(s, x32, x32.s, x32.type, keeps::input);  // x³ keeps x
    s.release(x32);
    const detail::value scaled = detail::pointwise(s, cube, cube.s, cube.type, keeps::nothing);  // 0.044715·x³
    s.release(cube);
    const detail::value sum = detail::add(s, x, scaled);
    s.release(scaled);
    const detail::value arg = detail::pointwise(s, sum, sum.s, sum.type, keeps::nothing);  // √(2/π)·(...)
    s.release(sum);
    const detail::value th = detail::keep_output_activation(s, arg);
    s.release(arg);
    const detail::value one = detail::pointwise(s, th, th.s, th.type, keeps::nothing);  // 1 + tanh
    s.release(th);
    const detail::value half = detail::pointwise(s, x, x.s, x.type, keeps::nothing);  // 0.5·x
    detail::value y = s.make(x.s, one.type, half.requires_grad || one.requires_grad);  // one is fp32 whenever either is
    const auto n = s.record(y);
    s.save(n, half), s.save(n, one);
    s.grad_to(n, half), s.grad_to(n, one);
    s.release(half), s.release(one);
    return y;
  }
  static constexpr std::int64_t flops(const gelu_new_op&, const shape&, const shape& out) { return checked_mul(8, out.numel()); }
};

constexpr layer gelu_new() { return as_layer(gelu_new_op{}); }

/// Soft-capping's tanh, the middle of `tanh(x / cap) * cap` with `cap` a Python number
/// (transformers' Gemma 2 final_logit_softcapping on the logits; softcap_if builds all three): of
/// the three new tensors autograd keeps tanh's output alone (DivBackward0 and MulBackward0 by a
/// number keep nothing; op_rules.md L25). tanh is on neither autocast's fp32 list: it runs in the
/// input's type. `identity`: a cap the configuration leaves out (the record stays, as scale_op's).
struct softcap_op {
  flag identity = {};
};

template <>
struct op_traits<softcap_op> {
  static constexpr const char* name = "softcap";
  static constexpr detail::value lower(detail::layer_ctx& c, const softcap_op& op, const detail::value& x) {
    if (op.identity) { c.s.retain(x.id); return x; }
    return detail::keep_output_activation(c.s, x);
  }
  static constexpr std::int64_t flops(const softcap_op& op, const shape&, const shape& out) { return op.identity ? 0 : out.numel(); }
};
/// scale() when `applied`, else the identity (Gemma's embedding × √width in a Llama-family model).
constexpr layer scale_if(bool applied) { return as_layer(scale_op{!applied}); }
/// `x / c` or `x * c` by a Python number when `applied` (nothing kept), else the identity.
constexpr layer scale_by_number_if(bool applied) { return as_layer(scale_op{!applied, false, true}); }
/// softcap_op (soft-capping's tanh) when `applied`, else the identity.
constexpr layer softcap_tanh_if(bool applied) { return as_layer(softcap_op{!applied}); }
/// scale_if(applied) in a rotary model (Llama family): the rotary tables' matmul follows it;
/// `by_number`: the multiplier is a Python number (Granite), not Gemma's 0-dim tensor.
constexpr layer embedding_scale_then_rotary(bool applied, bool by_number = false) { return as_layer(scale_op{!applied, true, by_number}); }

}  // namespace gpubudget
