// OpenAI CLIP's text tower, as its code lays tokens out: what sequence-first attention changes.
//
// openai/CLIP (clip/model.py) embeds text batch first, then runs its 12 ResidualAttentionBlocks on
// `x.permute(1, 0, 2)`: [77, B, 512] tokens through nn.MultiheadAttention's default batch_first=False,
// each block passing the causal float [77, 77] mask (CLIP.build_attention_mask) as attn_mask, and
// permutes back before ln_final. The per-sample shapes are those of a batch-first model; the bytes are
// not quite: sequence first, in_proj reads its input as it is (batch first, matmul copies the
// transposed view) and out_proj's backward copies no gradient, while ln_1 and ln_2 copy their
// non-contiguous input (the residual stream keeps the permuted layout). `sequence_first` and
// `batch_transpose()` say so (op_rules.md 2.6 #79; measured on PyTorch 2.6's CPU step on a 3-layer
// width-128 tower at 77 tokens: saved bytes exact, peaks -1.8 %); gpubudget-export writes both from
// the module itself. open_clip >= 2.24 builds the same blocks batch first (batch_first=True).
//
// Below, ViT-B/32's text tower (the CLIP paper, section 2.4: "a 63M-parameter 12-layer 512-wide model
// with 8 attention heads", a 49,152-token BPE vocabulary plus 256 byte tokens = 49,408 embeddings,
// 77 tokens), fine-tuned with AdamW under AMP fp16 on a 16 GB T4, batch 256.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr std::int64_t context = 77, width = 512, heads_n = 8, layers = 12, vocab = 49408;

// QuickGELU, x * torch.sigmoid(1.702 * x): a scaled copy, its sigmoid, their product (written out)
constexpr auto quick_gelu() { return parallel(merge_kind::multiply, sequential(), sequential(scale(), sigmoid())); }

// ResidualAttentionBlock: x + attn(ln_1(x), attn_mask=causal)[0]; x + mlp(ln_2(x)); `layout...`:
// sequence_first (OpenAI's) or nothing (open_clip's batch_first=True)
template <class... Layout>
constexpr auto block(Layout... layout) {
  return sequential(residual(named("ln_1", layer_norm()), named("attn", attention(width, heads(heads_n), attention_impl::torch_mha,
                                                                                    projection_names::torchvision, square_mask, layout...))),
                    residual(named("ln_2", layer_norm()), named("mlp", sequential(named("c_fc", linear(4 * width)), named("gelu", quick_gelu()),
                                                                                   named("c_proj", linear(width))))));
}
// encode_text: token_embedding + positional_embedding, the permutes around the blocks (OpenAI's),
// ln_final, the end-of-text token's features, @ text_projection ([512, 512], no bias)
template <class... Moved>
constexpr auto text_tower(auto one_block, Moved... moved) {
  return sequential(tokens(context), named("token_embedding", embedding(vocab, width)), named("positional_embedding", pos_embedding()), moved...,
                    named("transformer", repeat(layers, one_block)), moved..., named("ln_final", layer_norm()), select_token(context - 1),
                    named("text_projection", linear(width, no_bias)));
}
constexpr auto openai = text_tower(block(sequence_first), batch_transpose());
constexpr auto batch_first = text_tower(block());

constexpr auto& gpu = devices::t4;
constexpr auto plan = training{.batch = 256, .precision = amp_fp16, .optimizer = adamw};
constexpr auto openai_budget = budget_totals(openai, plan, gpu);
constexpr auto batch_first_budget = budget_totals(batch_first, plan, gpu);

// 49,408·512 + 77·512 + 12 blocks of (4·512² + 4·512 + 2·2·512 + 2·4·512² + 4·512 + 512) + 2·512 + 512²
static_assert(openai_budget.parameter_count == 63428096);
// the layouts keep the same tensors for backward: in_proj saves its input, or the copy of it
static_assert(openai_budget.saved_activations == batch_first_budget.saved_activations);
// they differ in what lives beside them: batch first, in_proj's input copies; sequence first, the
// norms' copies of the permuted stream. The step peaks where backward starts, where neither is alive
static_assert(openai_budget.forward_peak < batch_first_budget.forward_peak);
static_assert(openai_budget.step_peak == batch_first_budget.step_peak);
static_assert(fits(openai_budget));
constexpr auto largest_openai = max_micro_batch_of<openai, plan, gpu>();
constexpr auto largest_batch_first = max_micro_batch_of<batch_first, plan, gpu>();
}  // namespace

int main() {
  std::cout << "CLIP ViT-B/32 text tower, " << layers << " blocks of " << width << ", " << context << " tokens, batch " << plan.batch
            << ", AdamW, AMP fp16, on " << gpu.name << "\n\n";
  std::vector<labelled_budget> rows{{"openai/CLIP: permute(1, 0, 2), sequence-first blocks", openai_budget},
                                    {"open_clip: batch_first=True blocks", batch_first_budget}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Forward peak: " << format_bytes(openai_budget.forward_peak) << " sequence first, " << format_bytes(batch_first_budget.forward_peak)
            << " batch first (the step's peak, where backward starts, is the same)\n";
  std::cout << "Largest micro-batch: " << largest_openai << " sequence first, " << largest_batch_first << " batch first\n";
}
