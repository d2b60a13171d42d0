// gpubudget/layers/t5.hpp — T5's relative position bias (transformers T5Attention with
// has_relative_attention_bias): one [buckets, heads] table per stack, in its first layer.
#pragma once
#include <gpubudget/detail/op_record.hpp>

namespace gpubudget {

/// The bucket table of a T5 stack. It passes its input on; its parameters get their gradient
/// from the position bias that every layer of the stack adds to its scores; the embedding
/// lookup keeps the [L, L] int64 bucket indices (L: the stack's tokens). The add into the
/// scores is the materialized attention's scaling step (the same bytes: a new score-sized
/// tensor, nothing saved). Under eager attention (attention_impl::t5) not budgeted (a known gap,
/// docs/llm.md): the bias tensor itself, which transformers builds once per stack with the
/// attention mask added, [batch, heads, Lq, Lk] fp32 (one in the encoder, two in the decoder: self
/// and cross), alive during that stack's forward only (nothing saves it): 64 MiB each for t5-small
/// at batch 8 and 512 tokens. Through SDPA (attention_impl::t5_sdpa) the bias is [1, heads, Lq, Lk]
/// and budgeted with each call's mask (t5_sdpa_mask, op_rules.md L37).
struct relative_position_bias_op {
  std::int64_t buckets = {};  ///< relative_attention_num_buckets (32)
  std::int64_t heads = {};
};

template <>
struct op_traits<relative_position_bias_op> {
  static constexpr const char* name = "relative_position_bias";
  static constexpr detail::value lower(detail::layer_ctx& c, const relative_position_bias_op& op, const detail::value& x) {
    if (op.buckets <= 0 || op.heads <= 0) detail::invalid_layer_argument();
    if (x.s.rank != 2) detail::shape_mismatch_between_layers();
    const auto table = checked_mul(op.buckets, op.heads);
    c.add_param(table);
    detail::value y = c.s.view(x, x.s);
    auto n = c.s.record(y);
    c.s.grad_to(n, x, true);
    c.param_grads(n, table);
    // the lookup keeps its [L, L] int64 bucket indices, one table per step (t5_probe.py)
    if (c.trainable) c.s.save_new(n, checked_mul(checked_mul(x.s[0], x.s[0]), 8), 1, true);
    return y;
  }
  static constexpr std::int64_t flops(const relative_position_bias_op&, const shape&, const shape&) { return 0; }
};

/// T5's relative position bias table of `buckets` × `heads` (relative_attention_bias).
constexpr layer relative_position_bias(std::int64_t buckets, std::int64_t heads) {
  return as_layer(relative_position_bias_op{buckets, heads});
}

/// T5DenseActDense's `h.to(self.wo.weight.dtype)` before wo: under autocast the 16-bit
/// activation becomes an fp32 copy (nothing saved), which wo casts back (a copy wo saves).
struct to_parameter_type_op {};

template <>
struct op_traits<to_parameter_type_op> {
  static constexpr const char* name = "to_parameter_type";
  static constexpr detail::value lower(detail::layer_ctx& c, const to_parameter_type_op&, const detail::value& x) {
    return detail::cast_to(c.s, x, c.param_type());
  }
  static constexpr std::int64_t flops(const to_parameter_type_op&, const shape&, const shape&) { return 0; }
};

/// x.to(the parameters' type): a copy where the types differ (autocast), else x itself.
constexpr layer to_parameter_type() { return as_layer(to_parameter_type_op{}); }

}  // namespace gpubudget
