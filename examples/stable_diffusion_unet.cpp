// Fine-tuning Stable Diffusion 1.5's UNet at 512x512 (DreamBooth, a style fine-tune): does it fit?
//
// The UNet reads two conditioning inputs: the diffusion step, whose embedding every ResnetBlock2D adds to
// its feature map, and the text encoder's states [77, 768], which every transformer block's
// cross-attention reads (the text encoder frozen, its output computed before the step):
//
//     conditioned(sequential(input(77, 768)), conditioned(steps' block, unet))
//                                  cross_attention(...) reads the innermost enclosing sequence (the text
//                                  states), condition() the innermost condition (the steps' embedding)
//     parallel(merge_kind::concat, sequential(deeper...), sequential())
//                                  a skip connection: torch.cat([h, skip], dim=1) after the deeper path
//
// Written after diffusers' UNet2DConditionModel with SD 1.5's config (block_out_channels 320, 640, 1280,
// 1280; layers_per_block 2; 8 heads; use_linear_projection false). gpubudget-export maps the same parts
// from diffusers' code: measured on PyTorch 2.6's CPU step (tests/export), the whole topology at widths
// 32-64 and a two-level UNet have their saved bytes exact and peaks within 0.8 %; its graph of the
// 320-1280 model (custom_models.SD15UNet) budgets to the byte what this file writes (compared
// 2026-12-06: fp32 batch 4 and AMP fp16 batch 8 on an RTX 4090).
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr std::int64_t steps_width = 1280;

/// ResnetBlock2D's body: GroupNorm, SiLU, conv, + the steps' projection broadcast over the map,
/// GroupNorm, SiLU, conv.
constexpr auto resnet_body(std::int64_t out) {
  return sequential(group_norm(32), silu(), conv2d(out, 3, padding(1)),
                    parallel(merge_kind::add, sequential(), sequential(condition(steps_width), silu(), linear(out), reshape(out, 1, 1))),
                    group_norm(32), silu(), conv2d(out, 3, padding(1)));
}
/// (x + body(x)) / output_scale_factor; resnet_to: a 1x1 shortcut where the channels change (run after the body).
constexpr auto resnet(std::int64_t out) { return sequential(residual(resnet_body(out)), scale()); }
constexpr auto resnet_to(std::int64_t out) { return sequential(parallel(merge_kind::add, resnet_body(out), conv2d(out, 1)), scale()); }

/// Transformer2DModel on a side x side map of c channels: GroupNorm, a 1x1 conv in, the tokens through
/// self-attention, cross-attention to the text states and a GEGLU feed-forward (each pre-norm and
/// residual; diffusers' AttnProcessor2_0: q, k, v without bias, SDPA), back to the map, a 1x1 conv out.
constexpr auto transformer(std::int64_t c, std::int64_t side) {
  constexpr auto impl = attention_impl::separate_qkv_sdpa;
  return residual(group_norm(32), conv2d(c, 1), permute(1, 2, 0), reshape(side * side, c),
                  residual(layer_norm(), attention(c, heads(8), impl, qkv_bias(false))),
                  residual(layer_norm(), cross_attention(c, heads(8), kv_tokens(77), impl, qkv_bias(false), kv_width(768))),
                  residual(layer_norm(), linear(8 * c), parallel(merge_kind::multiply, chunk(2, 0, 1), sequential(chunk(2, 1, 1), gelu())), linear(c)),
                  reshape(side, side, c), contiguous_permute(2, 0, 1), conv2d(c, 1));
}
constexpr auto downsample(std::int64_t c) { return conv2d(c, 3, stride(2), padding(1)); }
constexpr auto upsample_conv(std::int64_t c) { return sequential(upsample(2, 2, upsample_mode::nearest), conv2d(c, 3, padding(1))); }
/// torch.cat([h, skip], dim=1): the deeper path first.
template <class... Deeper>
constexpr auto then_skip(const Deeper&... deeper) { return parallel(merge_kind::concat, sequential(deeper...), sequential()); }

// From the bottom up: the 12 skips (conv_in's output, each down layer's, each downsample's) are taken
// in reverse by the 12 up layers (3 a level).
constexpr auto mid = sequential(resnet(1280), transformer(1280, 8), resnet(1280));
constexpr auto level3 = sequential(resnet(1280), then_skip(resnet(1280), then_skip(mid), resnet_to(1280)), resnet_to(1280));
constexpr auto level2 = sequential(resnet_to(1280), transformer(1280, 16),
                                   then_skip(resnet(1280), transformer(1280, 16),
                                             then_skip(downsample(1280), then_skip(level3), resnet_to(1280), upsample_conv(1280)),
                                             resnet_to(1280), transformer(1280, 16)),
                                   resnet_to(1280), transformer(1280, 16));
constexpr auto level1 = sequential(resnet_to(640), transformer(640, 32),
                                   then_skip(resnet(640), transformer(640, 32),
                                             then_skip(downsample(640), then_skip(level2), resnet_to(1280), transformer(1280, 16), upsample_conv(1280)),
                                             resnet_to(640), transformer(640, 32)),
                                   resnet_to(640), transformer(640, 32));
constexpr auto level0 = sequential(resnet(320), transformer(320, 64),
                                   then_skip(resnet(320), transformer(320, 64),
                                             then_skip(downsample(320), then_skip(level1), resnet_to(640), transformer(640, 32), upsample_conv(640)),
                                             resnet_to(320), transformer(320, 64)),
                                   resnet_to(320), transformer(320, 64));
constexpr auto unet = sequential(input(4, 64, 64), conv2d(320, 3, padding(1)), then_skip(level0), resnet_to(320), transformer(320, 64),
                                 group_norm(32), silu(), conv2d(4, 3, padding(1)));
/// Timesteps(320): sinusoidal features (data), then TimestepEmbedding: Linear, SiLU, Linear to 1280.
constexpr auto steps = sequential(input(320), linear(steps_width), silu(), linear(steps_width));
constexpr auto sd15_unet = conditioned(sequential(input(77, 768)), conditioned(steps, unet));

// 859,520,964: sum(p.numel()) of SD 1.5's UNet2DConditionModel (diffusers reports 859.52 M), and of
// tests/export/custom_models.py's SD15UNet built from the same config in PyTorch 2.6
static_assert(budget_totals(sd15_unet, training{.batch = 1}, devices::a100_80gb).parameter_count == 859'520'964);

constexpr auto& rtx4090 = devices::rtx4090;
constexpr auto fp32_one = budget_totals(sd15_unet, training{.batch = 1, .optimizer = adamw}, rtx4090);
constexpr auto fp32_four = budget_totals(sd15_unet, training{.batch = 4, .optimizer = adamw}, rtx4090);
constexpr auto amp_plan = training{.batch = 4, .precision = precision_mode::amp_fp16, .optimizer = adamw};
constexpr auto amp_four = budget_totals(sd15_unet, amp_plan, rtx4090);
constexpr auto amp_eight = budget_totals(sd15_unet, training{.batch = 8, .precision = precision_mode::amp_fp16, .optimizer = adamw}, rtx4090);
constexpr auto largest_amp = max_micro_batch_of<sd15_unet, amp_plan, rtx4090>();
static_assert(fits(fp32_one));
}  // namespace

int main() {
  std::cout << "Stable Diffusion 1.5 UNet, 512x512 images (64x64x4 latents), text states [77, 768], AdamW, on an RTX 4090\n\n";
  std::vector<labelled_budget> rows{{"fp32, batch 1", fp32_one}, {"fp32, batch 4", fp32_four}, {"AMP fp16, batch 4", amp_four},
                                    {"AMP fp16, batch 8", amp_eight}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest AMP fp16 micro-batch on an " << rtx4090.name << ": " << largest_amp << "\n";
}
