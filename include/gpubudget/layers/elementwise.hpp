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
};

template <>
struct op_traits<scale_op> {
  static constexpr const char* name = "scale";
  static constexpr detail::value lower(detail::layer_ctx& c, const scale_op& op, const detail::value& x) {
    if (op.rotary_tables_follow) c.s.note_cublas_call();
    if (op.identity) { c.s.retain(x.id); return x; }
    return detail::pointwise(c.s, x, x.s, x.type, detail::keeps::nothing);
  }
};

constexpr layer scale() { return as_layer(scale_op{}); }
/// scale() when `applied`, else the identity (Gemma's embedding × √width in a Llama-family model).
constexpr layer scale_if(bool applied) { return as_layer(scale_op{!applied}); }
/// scale_if(applied) in a rotary model (Llama family): the rotary tables' matmul follows it.
constexpr layer embedding_scale_then_rotary(bool applied) { return as_layer(scale_op{!applied, true}); }

}  // namespace gpubudget
