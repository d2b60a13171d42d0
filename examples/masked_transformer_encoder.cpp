// nn.TransformerEncoder on padded batches: what nn.MultiheadAttention's masks cost.
//
// A text model built on nn.TransformerEncoder passes the causal mask (a language model:
// nn.Transformer.generate_square_subsequent_mask(L)) and, when its batches are padded, a [B, L] bool
// src_key_padding_mask. F.multi_head_attention_forward sends the causal mask alone to SDPA as
// is_causal, which costs nothing; a padding mask is expanded to the heads ([B·H, 1, L] per layer);
// and with both it adds the two into one float [B·H, L, L] mask per layer, which SDPA's fused
// kernels keep for backward (op_rules.md 2.6 #76; measured on PyTorch 2.6's CPU step: saved bytes
// exact; on CUDA, where an attn_mask rules out the flash kernel, the efficient kernel keeps it too,
// read from sdp_utils.cpp). The options causal_mask and key_padding_mask on attention_impl::torch_mha
// say which; gpubudget-export writes them (--key-padding-mask names the mask argument).
//
// Below, a 6-layer encoder (d 512, 8 heads, feed-forward 2048, dropout 0.1, post-norm as
// nn.TransformerEncoderLayer's default) over 512 tokens of a 30,522-token vocabulary, batch 32, fp32
// with AdamW on a 16 GB T4: unmasked, causal, padded, and causal on padded batches.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr std::int64_t length = 512, width = 512, heads_n = 8, layers = 6;

// one nn.TransformerEncoderLayer(512, 8, 2048, 0.1, batch_first=True) and its masks
template <class... Masks>
constexpr auto encoder(Masks... masks) {
  constexpr auto mlp = [] { return residual(linear(4 * width), relu(), dropout(10), linear(width), dropout(10)); };
  const auto layer = sequential(residual(attention(width, heads(heads_n), attention_impl::torch_mha, attention_dropout(10), masks...), dropout(10)),
                                layer_norm(), mlp(), layer_norm());
  return sequential(tokens(length), embedding(30522, width), repeat(layers, layer), mean_over(0), linear(2));
}
constexpr auto plain = encoder();
constexpr auto causal = encoder(causal_mask);
constexpr auto padded = encoder(key_padding_mask);
constexpr auto causal_padded = encoder(causal_mask, key_padding_mask);

constexpr auto& gpu = devices::t4;
constexpr auto plan = training{.batch = 32, .optimizer = adamw};
constexpr auto plain_budget = budget_totals(plain, plan, gpu);
constexpr auto causal_budget = budget_totals(causal, plan, gpu);
constexpr auto padded_budget = budget_totals(padded, plan, gpu);
constexpr auto both_budget = budget_totals(causal_padded, plan, gpu);

// the causal mask alone is SDPA's is_causal: the same bytes kept as without it
static_assert(causal_budget.saved_activations == plain_budget.saved_activations);
// with both masks every layer's kernel keeps the merged [B·H, L, L] fp32 mask: 6 × 268 MB
static_assert(both_budget.saved_activations - padded_budget.saved_activations ==
              layers * (plan.batch * heads_n * length * length * 4 - plan.batch * heads_n * length * 4));
static_assert(fits(plain_budget) && fits(both_budget));
constexpr auto largest_plain = max_micro_batch_of<plain, plan, gpu>();
constexpr auto largest_both = max_micro_batch_of<causal_padded, plan, gpu>();
static_assert(largest_both < largest_plain);
}  // namespace

int main() {
  std::cout << "nn.TransformerEncoder, " << layers << " layers of d " << width << ", " << length << " tokens, batch " << plan.batch
            << ", AdamW, fp32, on " << gpu.name << "\n\n";
  std::vector<labelled_budget> rows{{"no mask", plain_budget},
                                    {"causal mask (is_causal)", causal_budget},
                                    {"key padding mask", padded_budget},
                                    {"causal + key padding (merged per layer)", both_budget}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest micro-batch: " << largest_plain << " without masks, " << largest_both << " with both\n";
}
