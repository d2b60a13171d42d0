// gpubudget/models/t5.hpp — T5 (transformers T5ForConditionalGeneration): an encoder-decoder
// (graph.hpp encoder_decoder) of pre-norm blocks with T5LayerNorm (RMS, no bias), no biases in
// any Linear, materialized attention with a relative position bias and no 1/√d scaling, a ReLU
// feed-forward of d_ff, a shared embedding and an LM head tied to it (its input scaled by
// d_model^-0.5). The encoder reads `seq` tokens, the decoder `target_seq`. Saved bytes match
// PyTorch 2.6 CPU exactly in fp32 and bf16 autocast (benchmarks/accuracy/t5_probe.py).
#pragma once
#include <cstdint>

#include <gpubudget/gpubudget.hpp>

namespace gpubudget::models {

/// Sizes of a T5 model (transformers T5Config names in the comments).
struct t5_config {
  std::int64_t vocab = 32128;       ///< vocab_size
  std::int64_t width = 512;         ///< d_model
  std::int64_t head_width = 64;     ///< d_kv (heads · d_kv ≠ d_model in t5-3b and t5-11b)
  std::int64_t ffn = 2048;          ///< d_ff
  std::int64_t layers = 6;          ///< num_layers (encoder)
  std::int64_t decoder_layers = 6;  ///< num_decoder_layers
  std::int64_t heads = 8;           ///< num_heads
  std::int64_t buckets = 32;        ///< relative_attention_num_buckets
  std::int64_t dropout_percent = 10;  ///< dropout_rate · 100
  std::int64_t seq = 512;           ///< encoder tokens per sample
  std::int64_t target_seq = 512;    ///< decoder tokens per sample
  /// attn_implementation "sdpa": T5Attention through transformers' sdpa_attention_forward, the
  /// default since PR #47014 (transformers 5.17 ran it; 5.12 had eager only, as v4.48 did).
  bool sdpa = false;
  /// use_cache (T5Config's default): with sdpa, the decoder's k and v go through the
  /// EncoderDecoderCache in a training forward too (its copies, held by the output's past_key_values).
  bool use_cache = true;
  /// The batch is padded (the collator's attention_mask has zeros): eager adds its mask into the
  /// position bias padded or not (no change, op_rules.md L35); through SDPA every call's mask would be
  /// where(attention_mask, bias, min), one per sample — not modelled (a named error).
  bool padded_batch = false;
};

namespace detail {
/// What a padded batch through T5's SDPA attention would take, and why it is refused (the named error
/// t5_padded_batch_through_sdpa_is_not_modelled; tools/ say the same before building the model).
inline constexpr const char t5_padded_batch_through_sdpa[] =
    "gpubudget: a padded batch through T5's SDPA attention (transformers >= 5.13) is not modelled: every call's mask "
    "is then where(attention_mask, position_bias, min), [B, heads, Lq, Lk] per sample; budget the eager attention "
    "(config.json \"attn_implementation\": \"eager\", which adds the mask padded or not) or an unpadded batch";
[[noreturn]] inline void t5_padded_batch_through_sdpa_is_not_modelled() { gpubudget::detail::fail(t5_padded_batch_through_sdpa); }
/// A T5 attention's implementation and its token_positions: t5, or t5_sdpa with the decoder's
/// causal self-attention (causal_mask) and its cache (training_kv_cache, use_cache).
constexpr attention_impl t5_attention_impl(const t5_config& t) { return t.sdpa ? attention_impl::t5_sdpa : attention_impl::t5; }
constexpr token_positions t5_positions(const t5_config& t, bool decoder, bool self) {
  if (!t.sdpa || !decoder) return token_positions::plain;
  const auto causal = self ? static_cast<std::int64_t>(token_positions::causal_mask) : 0;
  const auto cache = t.use_cache ? static_cast<std::int64_t>(token_positions::kv_training_cache) : 0;
  return static_cast<token_positions>(causal | cache);
}
}  // namespace detail

/// T5LayerSelfAttention: x + dropout(o(attention(LN(x)))), scores + position bias; `Table`:
/// the stack's bucket table lives here (the first layer). Module names are transformers'
/// (modeling_t5.py): layer_norm, SelfAttention (its q, k, v, o: projection_names::t5,
/// relative_attention_bias), dropout.
template <bool Table>
constexpr auto t5_self_attention(const t5_config& t, bool decoder) {
  const auto att = named("SelfAttention", attention(t.width, heads(t.heads), detail::t5_attention_impl(t), no_bias, head_dim(t.head_width),
                                                    attention_dropout(t.dropout_percent), projection_names::t5, detail::t5_positions(t, decoder, true)));
  if constexpr (Table)
    return residual(named("layer_norm", rms_norm()), named("SelfAttention.relative_attention_bias", relative_position_bias(t.buckets, t.heads)), att,
                    named("dropout", dropout(t.dropout_percent)));
  else return residual(named("layer_norm", rms_norm()), att, named("dropout", dropout(t.dropout_percent)));
}

/// T5LayerFF: x + dropout(wo(dropout(relu(wi(LN(x)))).to(wo.weight.dtype))).
constexpr auto t5_feed_forward(const t5_config& t) {
  return residual(named("layer_norm", rms_norm()), named("DenseReluDense.wi", linear(t.ffn, no_bias)), named("DenseReluDense.act", relu()),
                  named("DenseReluDense.dropout", dropout(t.dropout_percent)), to_parameter_type(),
                  named("DenseReluDense.wo", linear(t.width, no_bias)), named("dropout", dropout(t.dropout_percent)));
}

/// T5LayerCrossAttention: x + dropout(o(attention(LN(x), encoder output))).
constexpr auto t5_cross_attention(const t5_config& t) {
  return residual(named("layer_norm", rms_norm()),
                  named("EncDecAttention", cross_attention(t.width, heads(t.heads), kv_tokens(t.seq), detail::t5_attention_impl(t), no_bias,
                                                           head_dim(t.head_width), attention_dropout(t.dropout_percent), projection_names::t5,
                                                           detail::t5_positions(t, true, false))),
                  named("dropout", dropout(t.dropout_percent)));
}

template <bool Table>
constexpr auto t5_encoder_block(const t5_config& t) { return sequential(named("layer.0", t5_self_attention<Table>(t, false)), named("layer.1", t5_feed_forward(t))); }
template <bool Table>
constexpr auto t5_decoder_block(const t5_config& t) {
  return sequential(named("layer.0", t5_self_attention<Table>(t, true)), named("layer.1", t5_cross_attention(t)), named("layer.2", t5_feed_forward(t)));
}

/// A T5 stack: its tokens, the shared embedding (shared(1, ...): one table for both stacks and
/// the head), dropout, the first block (with the bucket table), the others, final LN, dropout.
template <std::size_t First, std::size_t Other>
constexpr auto t5_stack(const t5_config& t, std::int64_t tokens_per_sample, std::int64_t layers, const model<First>& first,
                        const model<Other>& other) {
  if (layers < 2) gpubudget::detail::repeat_count_must_be_positive();  // the first block plus a repeat of the others
  // T5Stack's module names: embed_tokens (the model's `shared` table), block.0 .., final_layer_norm;
  // its one `dropout` module runs after the embedding and at the end
  return sequential(tokens(tokens_per_sample), named("embed_tokens", shared(1, embedding(t.vocab, t.width))), named("dropout", dropout(t.dropout_percent)),
                    named("block", sequential(indexed(0, first), numbered_from(1, repeat(layers - 1, other)))),
                    named("final_layer_norm", rms_norm()), named("dropout", dropout(t.dropout_percent)));
}

/// T5ForConditionalGeneration: encoder on `seq` tokens, decoder on `target_seq` tokens
/// attending to it, logits [target_seq, vocab] from the tied head.
constexpr auto t5(const t5_config& t) {
  if (t.sdpa && t.padded_batch) detail::t5_padded_batch_through_sdpa_is_not_modelled();
  const auto encoder = t5_stack(t, t.seq, t.layers, t5_encoder_block<true>(t), t5_encoder_block<false>(t));
  const auto decoder = t5_stack(t, t.target_seq, t.decoder_layers, t5_decoder_block<true>(t), t5_decoder_block<false>(t));
  // tie_word_embeddings: sequence_output * d_model**-0.5, then the shared table as the head
  return sequential(encoder_decoder(named("encoder", encoder), named("decoder", decoder)), scale(),
                    named("lm_head", shared(1, tied_linear(t.vocab))));
}

/// All parameters (transformers' sum of numel over model.parameters(): the shared table once).
constexpr std::int64_t t5_parameter_count(const t5_config& t) {
  const auto inner = t.heads * t.head_width;
  const auto attention = 4 * t.width * inner, feed_forward = 2 * t.width * t.ffn, table = t.buckets * t.heads;
  const auto encoder = t.layers * (attention + feed_forward + 2 * t.width) + table + t.width;
  const auto decoder = t.decoder_layers * (2 * attention + feed_forward + 3 * t.width) + table + t.width;
  return t.vocab * t.width + encoder + decoder;
}

// The original checkpoints' config.json (google-t5/t5-small ... google-t5/t5-11b on the Hugging
// Face hub): vocab_size 32128, 32 buckets, dropout_rate 0.1, n_positions 512 (relative
// positions: any length; 512 is the pre-training length, the default here).
/// t5-small: 60,506,624 parameters (d_model 512, d_kv 64, d_ff 2048, 6 + 6 layers, 8 heads).
constexpr t5_config t5_small(std::int64_t seq = 512) { return {32128, 512, 64, 2048, 6, 6, 8, 32, 10, seq, seq}; }
/// t5-base: 222,903,552 parameters (d_model 768, d_kv 64, d_ff 3072, 12 + 12 layers, 12 heads).
constexpr t5_config t5_base(std::int64_t seq = 512) { return {32128, 768, 64, 3072, 12, 12, 12, 32, 10, seq, seq}; }
/// t5-large: 737,668,096 parameters (d_model 1024, d_kv 64, d_ff 4096, 24 + 24 layers, 16 heads).
constexpr t5_config t5_large(std::int64_t seq = 512) { return {32128, 1024, 64, 4096, 24, 24, 16, 32, 10, seq, seq}; }
/// t5-3b: 2,851,598,336 parameters (d_model 1024, d_kv 128, d_ff 16384, 24 + 24 layers, 32 heads).
constexpr t5_config t5_3b(std::int64_t seq = 512) { return {32128, 1024, 128, 16384, 24, 24, 32, 32, 10, seq, seq}; }
/// t5-11b: 11,307,321,344 parameters (d_model 1024, d_kv 128, d_ff 65536, 24 + 24 layers, 128 heads).
constexpr t5_config t5_11b(std::int64_t seq = 512) { return {32128, 1024, 128, 65536, 24, 24, 128, 32, 10, seq, seq}; }

}  // namespace gpubudget::models
