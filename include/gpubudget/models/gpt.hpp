// gpubudget/models/gpt.hpp — GPT-style decoders: token embedding tied with the output head,
// learned positions, pre-norm blocks (q and kv projections, materialized attention), as in the
// reference measurements (benchmarks/accuracy/reference/README.md).
#pragma once
#include <cstdint>

#include <gpubudget/gpubudget.hpp>

namespace gpubudget::models {

/// Sizes of a GPT family member.
struct gpt_config {
  std::int64_t vocab = 50257;
  std::int64_t context = 1024;
  std::int64_t width = 768;
  std::int64_t layers = 12;
  std::int64_t heads = 12;
  std::int64_t dropout_percent = 0;  ///< residual and embedding dropout (GPT-2's resid_pdrop, embd_pdrop)
  std::int64_t seq = 1024;           ///< tokens per sample in the step being budgeted
  bool checkpoint_blocks = false;    ///< torch.utils.checkpoint around each block (non-reentrant)
  std::int64_t attention_dropout_percent = 0;  ///< dropout on the attention probabilities (GPT-2's attn_pdrop)
  /// split_qkv: `q @ kᵀ` materialized (the reference's GPT); flash: F.scaled_dot_product_attention.
  attention_impl attention = attention_impl::split_qkv;
  /// The head is transformers' GPT2LMHeadModel.lm_head, an nn.Linear on the tied weight
  /// (F.linear: tied_linear; its ATen graph's aten.linear), rather than the reference's minGPT
  /// `x @ W.t()` (transposed_tied_linear). They differ under autocast only (op_rules.md L5).
  bool linear_head = false;
  /// The MLP's activation is transformers' `gelu_new` (GPT2Config's default activation_function:
  /// NewGELUActivation, the tanh formula written out: gelu_new()) rather than nn.GELU (the
  /// reference's GPT, and activation_function "gelu"): three more tensors of the MLP's width kept.
  bool gelu_new = false;
  /// The attention's q, k, v come from one c_attn (transformers' GPT2Attention: a Conv1D of width
  /// 3·n_embd, split into views; projection_names::gpt2) rather than the reference's q and kv
  /// Linears (projection_names::gpt2_q_kv). The same weights and fp32 bytes; under autocast one
  /// 16-bit copy of the block's input instead of two.
  bool packed_c_attn = false;
  /// the batch is padded (a collator's padding: the attention_mask has zeros): transformers 5's SDPA
  /// (attention_impl::flash with packed_c_attn) then gets the causal mask AND the padding, [B, 1, T, T],
  /// in every layer (attention option padded_batch); its eager attention (split_qkv) adds a
  /// [B, 1, T, T] mask padded or not, so there it changes nothing
  bool padded_batch = false;
  /// transformers >= 5 runs k and v through a DynamicCache in a training forward too (the config's
  /// use_cache, GPT2Config's default): on its SDPA path (attention_impl::flash with packed_c_attn) a
  /// fused kernel then keeps those copies instead of views of c_attn's output (attention option
  /// training_kv_cache); the eager attention copies k and v for its products anyway
  bool use_cache = false;

  constexpr projection_names attention_names() const { return packed_c_attn ? projection_names::gpt2 : projection_names::gpt2_q_kv; }
  /// transformers' SDPA path (packed_c_attn, attention_impl::flash): the one where a padded batch and
  /// the DynamicCache change what is kept.
  constexpr bool transformers_sdpa() const { return packed_c_attn && attention == attention_impl::flash; }
};

/// GPT2Attention's op (attn.c_attn, attn.c_proj) with `extra` options (LoRA adapters), masked where
/// the batch is padded, its k and v cached (gpt_config::transformers_sdpa).
template <class... Extra>
constexpr layer gpt_attention(const gpt_config& g, Extra... extra) {
  const auto with = [&](auto... more) {
    return attention(g.width, heads(g.heads), g.attention, attention_dropout(g.attention_dropout_percent), g.attention_names(), extra..., more...);
  };
  const auto cached = [&](auto... more) { return g.transformers_sdpa() && g.use_cache ? with(training_kv_cache, more...) : with(more...); };
  return g.transformers_sdpa() && g.padded_batch ? cached(padded_batch) : cached();
}
/// GPT2Block with transformers' module names; the attention op holds attn.c_attn (q, k and v)
/// and attn.c_proj as its parts (gpt_config::attention_names).
constexpr auto gpt_block(const gpt_config& g) {
  return sequential(residual(named("ln_1", layer_norm()), named("attn", gpt_attention(g)),
                             named("attn.resid_dropout", dropout(g.dropout_percent))),
                    residual(named("ln_2", layer_norm()), named("mlp.c_fc", linear(4 * g.width)), named("mlp.act", g.gelu_new ? gelu_new() : gelu()),
                             named("mlp.c_proj", linear(g.width)), named("mlp.dropout", dropout(g.dropout_percent))));
}

/// A GPT (tied head): logits [seq, vocab] are the output.
constexpr auto gpt(const gpt_config& g) {
  auto blocks = named("transformer.h", repeat(g.layers, gpt_block(g)));
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;  // the block under the repeat
  // GPT2LMHeadModel's module names; lm_head is tied to transformer.wte (no weights of its own)
  return sequential(tokens(g.seq), named("transformer.wte", shared(1, embedding(g.vocab, g.width))),
                    named("transformer.wpe", learned_positions(g.context)), named("transformer.drop", dropout(g.dropout_percent)), blocks,
                    named("transformer.ln_f", layer_norm()), named("lm_head", shared(1, g.linear_head ? tied_linear(g.vocab) : transposed_tied_linear(g.vocab))));
}

/// GPT2ForSequenceClassification (transformers models/gpt2/modeling_gpt2.py): GPT2Model (no LM
/// head, so no tie) and `score` = Linear(n_embd, num_labels, bias=False) on every token, then the
/// logits of the last non-padding token are the output. gpt2 with 2 labels: 124,441,344
/// parameters (124,439,808 + 768 x 2).
constexpr auto gpt_seq_cls(const gpt_config& g, std::int64_t labels) {
  if (labels < 1) gpubudget::detail::invalid_layer_argument();
  auto blocks = named("transformer.h", repeat(g.layers, gpt_block(g)));
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;
  return sequential(tokens(g.seq), named("transformer.wte", embedding(g.vocab, g.width)), named("transformer.wpe", learned_positions(g.context)),
                    named("transformer.drop", dropout(g.dropout_percent)), blocks, named("transformer.ln_f", layer_norm()),
                    named("score", linear(labels, no_bias)), select_token(g.seq - 1));
}

constexpr gpt_config gpt2_small(std::int64_t seq = 1024) { return {50257, 1024, 768, 12, 12, 0, seq, false}; }
constexpr gpt_config gpt2_medium(std::int64_t seq = 1024) { return {50257, 1024, 1024, 24, 16, 0, seq, false}; }
constexpr gpt_config gpt2_large(std::int64_t seq = 1024) { return {50257, 1024, 1280, 36, 20, 0, seq, false}; }
constexpr gpt_config gpt2_xl(std::int64_t seq = 1024) { return {50257, 1024, 1600, 48, 25, 0, seq, false}; }

}  // namespace gpubudget::models
