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
};

constexpr auto gpt_block(const gpt_config& g) {
  return sequential(residual(layer_norm(), attention(g.width, heads(g.heads), g.attention, attention_dropout(g.attention_dropout_percent)),
                             dropout(g.dropout_percent)),
                    residual(layer_norm(), linear(4 * g.width), gelu(), linear(g.width), dropout(g.dropout_percent)));
}

/// A GPT (tied head): logits [seq, vocab] are the output.
constexpr auto gpt(const gpt_config& g) {
  auto blocks = repeat(g.layers, gpt_block(g));
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;  // the block under the repeat
  return sequential(tokens(g.seq), shared(1, embedding(g.vocab, g.width)), learned_positions(g.context), dropout(g.dropout_percent),
                    blocks, layer_norm(), shared(1, tied_linear(g.vocab)));
}

constexpr gpt_config gpt2_small(std::int64_t seq = 1024) { return {50257, 1024, 768, 12, 12, 0, seq, false}; }
constexpr gpt_config gpt2_medium(std::int64_t seq = 1024) { return {50257, 1024, 1024, 24, 16, 0, seq, false}; }
constexpr gpt_config gpt2_large(std::int64_t seq = 1024) { return {50257, 1024, 1280, 36, 20, 0, seq, false}; }
constexpr gpt_config gpt2_xl(std::int64_t seq = 1024) { return {50257, 1024, 1600, 48, 25, 0, seq, false}; }

}  // namespace gpubudget::models
