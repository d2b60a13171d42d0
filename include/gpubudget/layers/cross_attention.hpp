// gpubudget/layers/cross_attention.hpp — attention of a decoder over its encoder's output (T5's
// EncDecAttention), inside encoder_decoder(encoder, decoder) (graph.hpp).
//
// The keys and values are projected from the encoder's output itself (sim::encoder_output), so
// every decoder layer's k and v projections save that one tensor and its gradient sums the
// contributions of all of them — what PyTorch keeps for encoder_hidden_states.
#pragma once
#include <gpubudget/detail/diagnostics.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/attention.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// Queries from the input [Lq, width]; keys and values from the encoder's output [kv_tokens,
/// width]; the settings of attention_op.
struct cross_attention_op {
  std::int64_t width = {};
  std::int64_t heads = {};
  std::int64_t kv_tokens = {};   ///< the encoder's tokens (checked against its output; FLOPs)
  attention_impl impl = {};
  flag bias = {};
  std::int64_t dropout = {};     ///< attention-probability dropout, percent
  std::int64_t head_width = {};  ///< channels per head (0: width / heads)
  projection_names names = {};   ///< module names of the projections (train_only selects them)
};

namespace detail {
[[noreturn]] inline void cross_attention_outside_encoder_decoder() {
  fail("gpubudget: cross_attention(...) outside the decoder of an encoder_decoder(encoder, decoder) (no encoder output to attend to)");
}
constexpr attention_op as_attention(const cross_attention_op& op) {
  return {op.width, op.heads, op.kv_tokens, op.impl, 0, op.bias, false, op.dropout, op.head_width, false, op.names};
}
}  // namespace detail

template <>
struct op_traits<cross_attention_op> {
  static constexpr const char* name = "cross_attention";
  static constexpr detail::value lower(detail::layer_ctx& c, const cross_attention_op& op, const detail::value& x) {
    const detail::value& memory = c.s.encoder_output;
    if (memory.id < 0) detail::cross_attention_outside_encoder_decoder();
    if (memory.s.rank != 2 || memory.s[0] != op.kv_tokens) detail::shape_mismatch_between_layers();
    return detail::multi_head_attention(c, detail::as_attention(op), x, memory);
  }
  static constexpr std::int64_t flops(const cross_attention_op& op, const shape& in, const shape& out) {
    return op_traits<attention_op>::flops(detail::as_attention(op), in, out);
  }
  /// The projections' module names, as attention's.
  static constexpr const char* part_name(const cross_attention_op& op, std::int32_t k, std::uint8_t& parts) {
    return op_traits<attention_op>::part_name(detail::as_attention(op), k, parts);
  }
};

namespace detail {
constexpr void apply_cross_attention_option(cross_attention_op& o, attention_impl i) { o.impl = i; }
constexpr void apply_cross_attention_option(cross_attention_op& o, no_bias_t) { o.bias = false; }
constexpr void apply_cross_attention_option(cross_attention_op& o, head_dim h) { o.head_width = h.value; }
constexpr void apply_cross_attention_option(cross_attention_op& o, projection_names n) { o.names = n; }
constexpr void apply_cross_attention_option(cross_attention_op& o, gpubudget::attention_dropout p) {
  if (p.percent < 0 || p.percent > 100) dropout_percent_out_of_range();
  o.dropout = p.percent;
}
}  // namespace detail

/// Attention of [tokens, width] queries over the `encoder_tokens` outputs of the enclosing
/// encoder_decoder's encoder (a must-not-compile error elsewhere). Options: an attention_impl
/// (default split_qkv: materialized scores), no_bias, head_dim(n), attention_dropout(percent), a
/// projection_names scheme (as attention's).
template <class... Opts>
constexpr layer cross_attention(std::int64_t width, heads h, kv_tokens encoder_tokens, Opts... opts) {
  cross_attention_op o{width, h.value, encoder_tokens.value, attention_impl::split_qkv, true, 0, 0, projection_names::none};
  (detail::apply_cross_attention_option(o, opts), ...);
  if (!detail::projection_names_fit(detail::as_attention(o))) detail::projection_names_do_not_fit_the_attention_impl();
  return as_layer(o);
}

}  // namespace gpubudget
