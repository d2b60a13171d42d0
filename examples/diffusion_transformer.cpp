// DiT-XL/2, the class-conditional diffusion transformer, budgeted at compile time.
//
// facebookresearch/DiT (Peebles & Xie, "Scalable Diffusion Models with Transformers", ICCV 2023)
// conditions every block on c = t_embedder(t) + y_embedder(y) through adaLN-Zero: the block's own
// Linear projects c to six vectors, `shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp =
// self.adaLN_modulation(c).chunk(6, dim=1)`, which modulate the tokens around attention and the MLP:
// `x = x + gate_msa.unsqueeze(1) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa))`, with
// modulate(x, shift, scale) = x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1).
//
//     conditioned(labels, conditioned(steps + labels, model))
//                                the model's two conditioning inputs: the labels' embedding, read by the
//                                steps' block through condition(), whose output c the model reads
//     modulated(modulation, body)
//                                the block's adaLN_modulation runs first, from c; inside the body
//                                condition() reads its output, and chunk(6, k) takes the k-th vector
//
// gpubudget-export writes the same for DiT's forward(x, t, y) with `--condition timesteps:1000
// --condition labels:1000`; measured on PyTorch 2.6's CPU step (tests/export: DiT-S/2 and DiT-B/2
// widths, 4 blocks, its class dropout as written), saved bytes exact, peaks within 0.1 %. What the gates cost: each `gate * out`
// keeps the attention's and the MLP's outputs for the gate's gradient, two token-sized tensors a block
// that a plain pre-norm transformer block frees.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr std::int64_t width = 1152, latent = 32, patch = 2, channels = 4, tokens_per_side = latent / patch;

/// DiT's TimestepEmbedder: the steps' 256 sinusoidal features (data: no gradient reaches them) through
/// Linear, SiLU, Linear; then + the labels' embedding, the outer block's output.
constexpr auto steps_and_labels = sequential(input(256), linear(width), silu(), linear(width), parallel(merge_kind::add, sequential(), condition(width)));
/// DiT's LabelEmbedder: one class a sample (1,000 and the classifier-free guidance's null class).
constexpr auto labels = sequential(tokens(1), embedding(1001, width), reshape(width));

/// The k-th of `chunks` adaLN vectors, broadcast over the tokens: `v.unsqueeze(1)`.
constexpr auto adaln_vector(std::int64_t chunks, std::int64_t k) { return sequential(condition(chunks * width), chunk(chunks, k), reshape(1, width)); }
/// modulate(x, shift, scale) with the vectors at `shift` and `shift + 1`: x * (1 + scale) + shift.
constexpr auto modulate(std::int64_t chunks, std::int64_t shift) {
  return sequential(parallel(merge_kind::multiply, sequential(), sequential(adaln_vector(chunks, shift + 1), scale())),
                    parallel(merge_kind::add, sequential(), adaln_vector(chunks, shift)));
}
constexpr auto gate(std::int64_t k) { return parallel(merge_kind::multiply, sequential(), adaln_vector(6, k)); }
/// adaLN_modulation: SiLU and a Linear on c, chunked by the body.
constexpr auto adaln_modulation(std::int64_t chunks) { return sequential(condition(width), silu(), linear(chunks * width)); }

/// DiTBlock: timm's Attention (one packed qkv Linear, F.scaled_dot_product_attention) and Mlp
/// (GELU, tanh approximation), each between an affine-free LayerNorm's modulation and a gate.
constexpr auto dit_block = modulated(
    adaln_modulation(6),
    sequential(residual(layer_norm(no_affine), modulate(6, 0), attention(width, heads(16), attention_impl::flash, fused_qkv), gate(2)),
               residual(layer_norm(no_affine), modulate(6, 3), linear(4 * width), gelu(), linear(width), gate(5))));
constexpr auto final_layer = sequential(layer_norm(no_affine), modulated(adaln_modulation(2), modulate(2, 0)), linear(patch * patch * 2 * channels));

/// PatchEmbed, the fixed sin-cos positions (a parameter without gradient), 28 blocks, the final
/// layer and unpatchify (its einsum a permute).
constexpr auto model = sequential(input(channels, latent, latent), conv2d(width, patch, stride(patch)), flatten(1), transpose(0, 1),
                                  frozen(pos_embedding()), repeat(28, dit_block), final_layer,
                                  reshape(tokens_per_side, tokens_per_side, patch, patch, 2 * channels), permute(4, 0, 2, 1, 3),
                                  reshape(2 * channels, latent, latent));
constexpr auto dit_xl_2 = conditioned(labels, conditioned(steps_and_labels, model));

// DiT-XL/2: 675M parameters (the paper's Table 4); 675,129,632 = sum(p.numel()) of DiT's DiT_XL_2()
// as tests/export/custom_models.py writes it, counted in PyTorch 2.6
static_assert(budget_totals(dit_xl_2, training{.batch = 1}, devices::a100_80gb).parameter_count == 675'129'632);

// DiT's train.py: global batch 256 over the node's GPUs (32 a GPU on eight), AdamW (lr 1e-4, no weight
// decay), an EMA copy of the model on the GPU, no autocast
constexpr auto plan = training{.batch = 32, .optimizer = adamw, .ema = true};
constexpr auto& a100 = devices::a100_80gb;
constexpr auto& rtx4090 = devices::rtx4090;
constexpr auto on_a100 = budget_totals(dit_xl_2, plan, a100);
static_assert(fits(on_a100));
constexpr auto on_4090 = budget_totals(dit_xl_2, plan, rtx4090);
constexpr auto largest_on_4090 = max_micro_batch_of<dit_xl_2, plan, rtx4090>();
constexpr auto amp_on_4090 = budget_totals(dit_xl_2, training{.batch = 32, .precision = precision_mode::amp_bf16, .optimizer = adamw, .ema = true}, rtx4090);
}  // namespace

int main() {
  std::cout << "DiT-XL/2, 256x256 images (32x32x4 latents), forward(x, t, y), AdamW + EMA, batch 32 a GPU\n\n";
  std::vector<labelled_budget> rows{{"fp32 on an A100 80GB (DiT's train.py)", on_a100}, {"fp32 on an RTX 4090", on_4090}, {"AMP bf16 on an RTX 4090", amp_on_4090}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest fp32 micro-batch on an RTX 4090: " << largest_on_4090 << " (accumulate " << (32 + largest_on_4090 - 1) / (largest_on_4090 > 0 ? largest_on_4090 : 1)
            << " micro-batches for 32)\n";
}
