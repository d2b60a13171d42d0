// gpubudget/layers/cross_attention.hpp — attention of a decoder over its encoder's output (T5's
// EncDecAttention), inside encoder_decoder(encoder, decoder) (graph.hpp).
//
// The keys and values are projected from the encoder's output itself (sim::encoder_output), so
// every decoder layer's k and v projections save that one tensor and its gradient sums the
// contributions of all of them — what PyTorch keeps for encoder_hidden_states.
#pragma once
#include <type_traits>

#include <gpubudget/base/diagnostics.hpp>
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
  std::int64_t adapters = {};    ///< LoRA adapters on the projections (attention_adapters, packed; 0: none)
  qkv_bias_kind qkv_bias = {};   ///< q, k, v projections' bias when not `bias`'s (diffusers' to_q/to_k/to_v have none, to_out one)
  std::int64_t kv_width = {};    ///< the memory's width when not `width` (kv_width(...)); k and v project from it
  token_positions positions = {};  ///< nn.MultiheadAttention's: the memory's key_padding_mask (4), sequence_first (16)
};

namespace detail {
[[noreturn]] inline void cross_attention_outside_encoder_decoder() {
  fail("gpubudget: cross_attention(...) outside the decoder of an encoder_decoder(encoder, decoder) (no encoder output to attend to)");
}
[[noreturn]] inline void cross_attention_memory_width_differs() {
  fail("gpubudget: cross_attention(...) reads a memory whose width is not its kv_width(...) (without one: its own width)");
}
[[noreturn]] inline void memory_mask_needs_torch_mha() {
  fail("gpubudget: cross_attention takes one mask, key_padding_mask (nn.TransformerDecoderLayer's memory_key_padding_mask: "
       "the memory's padded tokens), on attention_impl::torch_mha; a causal or square memory mask is not modelled");
}
constexpr attention_op as_attention(const cross_attention_op& op) {
  return {op.width, op.heads, op.kv_tokens, op.impl, 0, op.bias, op.positions, op.dropout, op.head_width, op.qkv_bias, op.names, op.adapters};
}
}  // namespace detail

template <>
struct op_traits<cross_attention_op> {
  static constexpr const char* name(const cross_attention_op& op) { return op.adapters != 0 ? "cross_attention (lora)" : "cross_attention"; }
  static constexpr detail::value lower(detail::layer_ctx& c, const cross_attention_op& op, const detail::value& x) {
    const detail::value& memory = c.s.sequence_memory;
    if (memory.id < 0) detail::cross_attention_outside_encoder_decoder();
    if (memory.s.rank != 2 || memory.s[0] != op.kv_tokens) detail::shape_mismatch_between_layers();
    if (memory.s[1] != (op.kv_width > 0 ? op.kv_width : op.width)) detail::cross_attention_memory_width_differs();
    c.adapters = op.adapters;  // the projections' (projection)
    return detail::multi_head_attention(c, detail::as_attention(op), x, memory);
  }
  /// attention's, the k and v projections from the memory's width
  static constexpr std::int64_t flops(const cross_attention_op& op, const shape& in, const shape& out) {
    const auto same = op_traits<attention_op>::flops(detail::as_attention(op), in, out);
    if (op.kv_width <= 0) return same;
    const auto d = op.head_width > 0 ? op.head_width : op.width / (op.heads > 0 ? op.heads : 1);
    const auto kv_out = 2 * (op.heads > 0 ? op.heads : 1) * d;
    return same + 2 * op.kv_tokens * (op.kv_width - op.width) * kv_out;
  }
  /// The projections' module names, as attention's.
  static constexpr const char* part_name(const cross_attention_op& op, std::int32_t k, std::uint8_t& parts) {
    return op_traits<attention_op>::part_name(detail::as_attention(op), k, parts);
  }
};

namespace detail {
/// The options cross_attention takes: attention's, less those its reading of the encoder's
/// output does not model (kv_heads, rotary, fused_qkv, masks).
template <class Opt>
inline constexpr bool cross_attention_option = std::is_same_v<Opt, attention_impl> || std::is_same_v<Opt, no_bias_t> ||
                                               std::is_same_v<Opt, head_dim> || std::is_same_v<Opt, projection_names> ||
                                               std::is_same_v<Opt, gpubudget::attention_dropout> || std::is_same_v<Opt, attention_adapters> ||
                                               std::is_same_v<Opt, qkv_bias> || std::is_same_v<Opt, kv_width> ||
                                               std::is_same_v<Opt, sequence_first_t> || std::is_same_v<Opt, key_padding_mask_t> ||
                                               std::is_same_v<Opt, training_kv_cache_t> || std::is_same_v<Opt, token_positions>;
/// The memory's key_padding_mask (nn.TransformerDecoderLayer's memory_key_padding_mask) and sequence_first
/// are nn.MultiheadAttention's: attention_impl::torch_mha.
constexpr cross_attention_op as_cross_attention(const attention_op& a) {
  if (is_sequence_first(a) && a.impl != attention_impl::torch_mha) sequence_first_needs_torch_mha();
  if (masks_of(a) != 0 && (a.impl != attention_impl::torch_mha || masks_of(a) != 4)) memory_mask_needs_torch_mha();
  // T5's EncDecAttention caches its k and v (t5_sdpa); no other position setting applies across two tensors
  if (has_training_cache(a) && a.impl != attention_impl::t5_sdpa) training_kv_cache_needs_a_transformers_decoder();
  if ((static_cast<std::int64_t>(a.positions) & ~std::int64_t{4 | 16 | 1024}) != 0) invalid_layer_argument();
  return {a.width, a.heads, a.kv_tokens, a.impl, a.bias, a.dropout, a.head_width, a.names, a.adapters, a.qkv_bias, 0, a.positions};
}
constexpr void apply_attention_option(attention_op&, kv_width) {}  // cross_attention's own (apply_cross_width)
template <class Opt>
constexpr void apply_cross_width(cross_attention_op& o, const Opt& opt) {
  if constexpr (std::is_same_v<Opt, kv_width>) {
    if (opt.value <= 0) invalid_layer_argument();
    o.kv_width = opt.value;
  }
}
}  // namespace detail

/// Attention of [tokens, width] queries over the `encoder_tokens` outputs of the enclosing
/// encoder_decoder's encoder, or over the conditioning sequence of a conditioned(condition, model)
/// (Stable Diffusion's cross-attention to the text encoder's [77, 768] states; its keys and values
/// project from the memory's own width) — a must-not-compile error elsewhere. Options: an
/// attention_impl (default split_qkv: materialized scores), no_bias, qkv_bias(false) (diffusers'
/// to_q / to_k / to_v without bias, to_out with one), kv_width(n) (a memory of another width: SD's 768),
/// head_dim(n), attention_dropout(percent), a projection_names scheme, attention_adapters{...} (as attention's),
/// sequence_first (attention_impl::torch_mha: nn.MultiheadAttention(batch_first=False), nn.TransformerDecoderLayer's default),
/// key_padding_mask (torch_mha: memory_key_padding_mask, a [B, kv_tokens] bool mask of the memory's padded tokens),
/// training_kv_cache (attention_impl::t5_sdpa: T5's EncoderDecoderCache in a training forward; or the
/// token_positions value a model chooses at run time).
template <class... Opts>
constexpr layer cross_attention(std::int64_t width, heads h, kv_tokens encoder_tokens, Opts... opts) {
  static_assert((detail::cross_attention_option<Opts> && ...),
                "gpubudget: cross_attention takes an attention_impl, no_bias, head_dim, attention_dropout, projection_names, "
                "attention_adapters, qkv_bias, kv_width, sequence_first, key_padding_mask or training_kv_cache");
  attention_op a{width, h.value, encoder_tokens.value, attention_impl::split_qkv, 0, true, token_positions::plain, 0, 0, qkv_bias_kind::as_output, projection_names::none, 0};
  (detail::apply_attention_option(a, opts), ...);  // attention's options, checked as attention checks them
  if (!detail::projection_names_fit(a)) detail::projection_names_do_not_fit_the_attention_impl();
  auto op = detail::as_cross_attention(a);
  (detail::apply_cross_width(op, opts), ...);
  return as_layer(op);
}

}  // namespace gpubudget
