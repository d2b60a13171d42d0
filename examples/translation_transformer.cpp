// nn.Transformer as a translation model, budgeted as PyTorch trains it.
//
// The source sentence runs through the encoder; the target, shifted right, through the decoder with
// the causal tgt_mask, each decoder layer attending to the encoder's output through
// nn.MultiheadAttention (its multihead_attn). In the library that is conditioned(source part, target
// part): the source part (tokens, embedding, encoder) makes the memory, and each decoder layer's
// cross_attention(..., attention_impl::torch_mha) reads it — nn.MultiheadAttention across two tensors,
// q and k, v projected apart from copies of their inputs, the memory's copy and the packed k, v kept
// per layer (op_rules.md 2.6 #78). gpubudget-export writes this for a model whose forward takes
// (tgt, src) (`--tokens T --condition tokens:S`), or (src, tgt) with `--source-first`; measured on
// PyTorch 2.6's CPU step
// (tests/export seq2seq_transformer_b2_t64_s48): parameters and saved bytes exact, peaks within 1.5 %.
//
// On padded batches (src_key_padding_mask, tgt_key_padding_mask and memory_key_padding_mask, made
// from the ids as `ids == pad_id`): the encoder keeps each layer's [B·H, 1, S] padding mask, the
// decoder's self-attention the causal and padding masks merged into one [B·H, T, T] float per layer,
// and each cross-attention the memory's [B·H, 1, S] (op_rules.md 2.6 #76, #80; measured: saved bytes
// exact, tests/export seq2seq_transformer_padded_*).
//
// Below, "Attention Is All You Need"'s base model (d 512, 8 heads, 6 + 6 layers, feed-forward 2048,
// dropout 0.1) with nn.Transformer's own encoder and decoder norms, a 37,000-token vocabulary with
// separate source and target embeddings and output layer (as a plain nn.Transformer model writes
// them), sentences of 128 tokens, AdamW, AMP fp16 on a 16 GB V100.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr std::int64_t vocab = 37000, width = 512, heads_n = 8, layers = 6, length = 128;

constexpr auto self_attention(auto... masks) {
  return residual(attention(width, heads(heads_n), attention_impl::torch_mha, attention_dropout(10), masks...), dropout(10));
}
constexpr auto mlp() { return residual(linear(4 * width), relu(), dropout(10), linear(width), dropout(10)); }
// nn.Transformer: nn.TransformerEncoderLayer and nn.TransformerDecoderLayer, post-norm (their default);
// `padding...`: key_padding_mask on every attention (padded batches) or nothing
constexpr auto translator(auto... padding) {
  const auto encoder_layer = sequential(self_attention(padding...), layer_norm(), mlp(), layer_norm());
  const auto decoder_layer = sequential(
      self_attention(causal_mask, padding...), layer_norm(),
      residual(cross_attention(width, heads(heads_n), kv_tokens(length), attention_impl::torch_mha, attention_dropout(10), padding...), dropout(10)),
      layer_norm(), mlp(), layer_norm());
  return conditioned(sequential(tokens(length), embedding(vocab, width), repeat(layers, encoder_layer), layer_norm()),
                     sequential(tokens(length), embedding(vocab, width), repeat(layers, decoder_layer), layer_norm(), linear(vocab)));
}
constexpr auto base = translator();
constexpr auto padded = translator(key_padding_mask);

constexpr auto& gpu = devices::v100_16gb;
constexpr auto plan = training{.batch = 64, .precision = amp_fp16, .optimizer = adamw};
constexpr auto step = budget_totals(base, plan, gpu);
constexpr auto padded_step = budget_totals(padded, plan, gpu);

// two embeddings and the output layer (3 x 37,000 x 512 + 37,000), 6 encoder layers of 3,152,384 and
// 6 decoder layers of 4,204,032, the two final norms: sum(p.numel()) of the PyTorch model
static_assert(step.parameter_count == 3 * vocab * width + vocab + layers * 3'152'384 + layers * 4'204'032 + 2 * 2 * width);
static_assert(fits(step));
constexpr auto largest = max_micro_batch_of<base, plan, gpu>();
static_assert(largest >= plan.batch);
// the padded batches' masks are kept for backward (the decoder's merged [B·H, T, T] ones the most)
static_assert(padded_step.saved_activations > step.saved_activations);
constexpr auto largest_padded = max_micro_batch_of<padded, plan, gpu>();
static_assert(largest_padded <= largest);
}  // namespace

int main() {
  std::cout << "nn.Transformer (base: d " << width << ", " << layers << " + " << layers << " layers), " << length << " tokens each side, vocabulary "
            << vocab << ", batch " << plan.batch << ", AdamW, AMP fp16, on " << gpu.name << "\n\n";
  std::vector<labelled_budget> rows{{"translation, base model", step}, {"the same on padded batches (key padding masks)", padded_step}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest micro-batch: " << largest << ", " << largest_padded << " on padded batches\n";
}
