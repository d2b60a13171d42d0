// gpubudget/models/torchvision.hpp — torchvision 0.14 classification models, op for op as
// their modules run in training (in-place ReLUs and `out += identity`, LayerNorm2d's permutes,
// nn.MultiheadAttention's training path), parameterized by image size and class count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include <gpubudget/gpubudget.hpp>

namespace gpubudget::models {

namespace detail {

// ResNet records carry torchvision's module names, relative to the block around them
// (graph.hpp named()): conv1, bn1, relu, maxpool, layer1..layer4 with their blocks `layer4.2` and
// the blocks' modules `layer4.2.conv3`, `layer4.0.downsample.0`, avgpool, fc; so `train_only =
// "fc"` / `--freeze-all-but layer4.2.conv3` select what they select in PyTorch. A block's one
// nn.ReLU module runs after each BatchNorm: every ReLU record is named "relu".

/// torchvision.models.resnet.BasicBlock without / with a downsample branch.
constexpr auto basic_block(std::int64_t planes) {
  return sequential(residual_inplace(named("conv1", conv2d(planes, 3, padding(1), no_bias)), named("bn1", batch_norm()),
                                     named("relu", relu_inplace()), named("conv2", conv2d(planes, 3, padding(1), no_bias)),
                                     named("bn2", batch_norm())),
                    named("relu", relu_inplace()));
}
/// The downsample branch: Sequential(Conv2d 1×1 with stride, BatchNorm2d).
constexpr auto downsample(std::int64_t out, std::int64_t s) {
  return named("downsample", sequential(named("0", conv2d(out, 1, stride(s), no_bias)), named("1", batch_norm())));
}
constexpr auto basic_block_down(std::int64_t planes, std::int64_t s) {
  return sequential(parallel(merge_kind::add_inplace,
                             sequential(named("conv1", conv2d(planes, 3, stride(s), padding(1), no_bias)), named("bn1", batch_norm()),
                                        named("relu", relu_inplace()), named("conv2", conv2d(planes, 3, padding(1), no_bias)),
                                        named("bn2", batch_norm())),
                             downsample(planes, s)),
                    named("relu", relu_inplace()));
}
/// torchvision.models.resnet.Bottleneck (stride on the 3×3, "ResNet v1.5"); `width` is
/// planes · width_per_group / 64.
constexpr auto bottleneck_main(std::int64_t planes, std::int64_t width, std::int64_t s) {
  return sequential(named("conv1", conv2d(width, 1, no_bias)), named("bn1", batch_norm()), named("relu", relu_inplace()),
                    named("conv2", conv2d(width, 3, stride(s), padding(1), no_bias)), named("bn2", batch_norm()),
                    named("relu", relu_inplace()), named("conv3", conv2d(planes * 4, 1, no_bias)), named("bn3", batch_norm()));
}
constexpr auto bottleneck(std::int64_t planes, std::int64_t width) {
  return sequential(residual_inplace(bottleneck_main(planes, width, 1)), named("relu", relu_inplace()));
}
constexpr auto bottleneck_down(std::int64_t planes, std::int64_t width, std::int64_t s) {
  return sequential(parallel(merge_kind::add_inplace, bottleneck_main(planes, width, s), downsample(planes * 4, s)),
                    named("relu", relu_inplace()));
}

constexpr auto resnet_stem(std::int64_t image) {
  return sequential(input(3, image, image), named("conv1", conv2d(64, 7, stride(2), padding(3), no_bias)), named("bn1", batch_norm()),
                    named("relu", relu_inplace()), named("maxpool", max_pool2d(3, stride(2), padding(1))));
}
constexpr auto resnet_head(std::int64_t classes) {
  return sequential(named("avgpool", adaptive_avg_pool2d(1, 1)), flatten(), named("fc", linear(classes)));
}
/// torchvision's _make_layer: block 0 (with the downsample branch when it has one), then
/// `blocks - 1` blocks numbered 1.. in the same nn.Sequential.
template <std::size_t First, std::size_t Rest>
constexpr auto resnet_stage(const char* name, const model<First>& first, std::int64_t blocks, const model<Rest>& block) {
  return named(name, sequential(named("0", first), numbered_from(1, continue_sequence(repeat(blocks - 1, block)))));
}

/// ConvNeXt's LayerNorm2d: permute to channels-last, LayerNorm, permute back.
constexpr auto layer_norm_2d() { return sequential(permute(1, 2, 0), layer_norm(), permute(2, 0, 1)); }

/// torchvision CNBlock: the depthwise conv's input is channels-last-strided (it comes out of a
/// permute + in-place residual add). `drop` = stochastic depth > 0.
/// Module names are torchvision's: block.0 .. block.6, layer_scale (a parameter of the block),
/// stochastic_depth.
constexpr auto cn_block(std::int64_t dim, bool drop) {
  return residual_inplace(named("block.0", depthwise_conv2d(7, padding(3), channels_last_input)), named("block.1", permute(1, 2, 0)),
                          named("block.2", layer_norm()), named("block.3", linear(4 * dim)), named("block.4", gelu()),
                          named("block.5", linear(dim)), named("block.6", permute(2, 0, 1)), named("layer_scale", layer_scale()),
                          named("stochastic_depth", stochastic_depth(drop ? 1 : 0)));
}

}  // namespace detail

// --- ResNet -------------------------------------------------------------------------------------

/// resnet18 / resnet34: BasicBlock stages of {2,2,2,2} / {3,4,6,3} blocks.
constexpr auto resnet_basic(std::int64_t b1, std::int64_t b2, std::int64_t b3, std::int64_t b4, std::int64_t image, std::int64_t classes) {
  using namespace detail;
  return sequential(resnet_stem(image), named("layer1", sequential(continue_sequence(repeat(b1, basic_block(64))))),
                    resnet_stage("layer2", basic_block_down(128, 2), b2, basic_block(128)),
                    resnet_stage("layer3", basic_block_down(256, 2), b3, basic_block(256)),
                    resnet_stage("layer4", basic_block_down(512, 2), b4, basic_block(512)), resnet_head(classes));
}
constexpr auto resnet18(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_basic(2, 2, 2, 2, image, classes); }
constexpr auto resnet34(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_basic(3, 4, 6, 3, image, classes); }

/// Bottleneck ResNets: resnet50 {3,4,6,3}, resnet101 {3,4,23,3}, resnet152 {3,8,36,3};
/// `width_factor` 2 gives wide_resnet50_2.
constexpr auto resnet_bottleneck(std::int64_t b1, std::int64_t b2, std::int64_t b3, std::int64_t b4, std::int64_t image,
                                 std::int64_t classes, std::int64_t width_factor = 1) {
  using namespace detail;
  const auto w = width_factor;
  return sequential(resnet_stem(image),
                    resnet_stage("layer1", bottleneck_down(64, 64 * w, 1), b1, bottleneck(64, 64 * w)),
                    resnet_stage("layer2", bottleneck_down(128, 128 * w, 2), b2, bottleneck(128, 128 * w)),
                    resnet_stage("layer3", bottleneck_down(256, 256 * w, 2), b3, bottleneck(256, 256 * w)),
                    resnet_stage("layer4", bottleneck_down(512, 512 * w, 2), b4, bottleneck(512, 512 * w)), resnet_head(classes));
}
constexpr auto resnet50(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 4, 6, 3, image, classes); }
constexpr auto resnet101(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 4, 23, 3, image, classes); }
constexpr auto resnet152(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 8, 36, 3, image, classes); }
constexpr auto wide_resnet50_2(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 4, 6, 3, image, classes, 2); }

// --- Vision Transformer -------------------------------------------------------------------------

namespace detail {
/// torchvision's EncoderBlock with its module names (ln_1, self_attention, ln_2, mlp.0 Linear,
/// mlp.1 GELU, mlp.3 Linear): transformer_block_mlp(width, heads, mlp, torch_mha), named. The MLP
/// is a block of its own: EncoderBlock.forward writes `y = self.ln_2(x); y = self.mlp(y)`, so
/// ln_2's output stays referenced while the MLP runs (what a frozen block's forward peak sees,
/// where nothing saves it; tests/export/trace_peak.py on vit_b_16_lora_head_r8_b2_96).
constexpr auto vit_encoder_block(std::int64_t width, std::int64_t num_heads, std::int64_t mlp) {
  return sequential(residual(named("ln_1", layer_norm()), named("self_attention", attention(width, heads(num_heads), attention_impl::torch_mha, projection_names::torchvision))),
                    residual(named("ln_2", layer_norm()), named("mlp", sequential(named("0", linear(mlp)), named("1", gelu()), named("3", linear(width))))));
}
}  // namespace detail

/// torchvision VisionTransformer: patch embedding (+ class token, + positions), `layers`
/// EncoderBlocks (nn.MultiheadAttention, GELU MLP), final LayerNorm, head on the class token.
/// Dropout(0.0) layers are identities and are left out.
constexpr auto vision_transformer(std::int64_t patch, std::int64_t layers, std::int64_t width, std::int64_t num_heads,
                                  std::int64_t mlp, std::int64_t image, std::int64_t classes) {
  // torchvision's module names: conv_proj (here with the class token, which the patch embedding
  // op holds), encoder.pos_embedding, encoder.layers.encoder_layer_0.., encoder.ln, heads.head.
  // The encoder is a block of its own: forward's `x = torch.cat(...)` stays referenced while
  // `self.encoder(x)` runs (op_rules.md CT10)
  return sequential(input(3, image, image), named("conv_proj", patch_embedding(width, patch, true, false)),
                    named("encoder", sequential(named("pos_embedding", pos_embedding()),
                                                named("layers.encoder_layer_", repeat(layers, detail::vit_encoder_block(width, num_heads, mlp))),
                                                named("ln", layer_norm()))),
                    select_token(0), named("heads.head", linear(classes)));
}
constexpr auto vit_b_16(std::int64_t image = 224, std::int64_t classes = 1000) { return vision_transformer(16, 12, 768, 12, 3072, image, classes); }
constexpr auto vit_l_16(std::int64_t image = 224, std::int64_t classes = 1000) { return vision_transformer(16, 24, 1024, 16, 4096, image, classes); }

// --- ConvNeXt -----------------------------------------------------------------------------------

/// torchvision ConvNeXt with stage depths d1..d4 and widths c, 2c, 4c, 8c; stochastic depth
/// 0.1 (zero only for the very first block). `frozen_backbone`: everything but the classifier
/// has requires_grad=False (seed report 003's stage 1).
constexpr auto convnext(std::int64_t d1, std::int64_t d2, std::int64_t d3, std::int64_t d4, std::int64_t c, std::int64_t image,
                        std::int64_t classes, bool frozen_backbone) {
  using namespace detail;
  // torchvision's features.0 (stem) .. features.7 (stage 4), with their modules (features.1.0,
  // features.2.1, ...); stage 1's first block (no stochastic depth) is modeled apart from the rest
  auto features = sequential(named("0.0", conv2d(c, 4, stride(4))), named("0.1", layer_norm_2d()),
                             named("1.0", cn_block(c, false)), named("1", numbered_from(1, repeat(d1 - 1, cn_block(c, true)))),
                             named("2.0", layer_norm_2d()), named("2.1", conv2d(2 * c, 2, stride(2), channels_last_input)),
                             named("3", repeat(d2, cn_block(2 * c, true))),
                             named("4.0", layer_norm_2d()), named("4.1", conv2d(4 * c, 2, stride(2), channels_last_input)),
                             named("5", repeat(d3, cn_block(4 * c, true))),
                             named("6.0", layer_norm_2d()), named("6.1", conv2d(8 * c, 2, stride(2), channels_last_input)),
                             named("7", repeat(d4, cn_block(8 * c, true))));
  features.records[0].flags.frozen = frozen_backbone;
  features.records[0].name = "features";
  return sequential(input(3, image, image), features, named("avgpool", adaptive_avg_pool2d(1, 1)),
                    named("classifier", sequential(named("0", layer_norm_2d()), named("1", flatten()), named("2", linear(classes)))));
}
constexpr auto convnext_tiny(std::int64_t image = 224, std::int64_t classes = 1000, bool frozen_backbone = false) {
  return convnext(3, 3, 9, 3, 96, image, classes, frozen_backbone);
}
constexpr auto convnext_small(std::int64_t image = 224, std::int64_t classes = 1000, bool frozen_backbone = false) {
  return convnext(3, 3, 27, 3, 96, image, classes, frozen_backbone);
}


// --- VGG ----------------------------------------------------------------------------------------

namespace detail {

/// One VGG convolution: Conv2d(3×3, padding 1, with bias) [→ BatchNorm] → ReLU(inplace).
template <bool BN>
constexpr auto vgg_conv(std::int64_t ch) {
  if constexpr (BN) return sequential(conv2d(ch, 3, padding(1)), batch_norm(), relu_inplace());
  else return sequential(conv2d(ch, 3, padding(1)), relu_inplace());
}
/// Modules one VGG convolution adds to torchvision's `features`: Conv2d [, BatchNorm2d], ReLU.
template <bool BN>
inline constexpr std::int64_t vgg_conv_modules = BN ? 3 : 2;
/// The same convolution, its modules named features.`first`, `first` + 1, ...
template <bool BN>
constexpr auto vgg_conv_at(std::int64_t ch, std::int64_t first) {
  if constexpr (BN) return sequential(indexed(first, conv2d(ch, 3, padding(1))), indexed(first + 1, batch_norm()), indexed(first + 2, relu_inplace()));
  else return sequential(indexed(first, conv2d(ch, 3, padding(1))), indexed(first + 1, relu_inplace()));
}
/// `Convs` convolutions of `ch` channels, then MaxPool2d(2, 2); its modules are features.`first`..
template <bool BN, int Convs>
constexpr auto vgg_stage(std::int64_t ch, std::int64_t first) {
  constexpr auto w = vgg_conv_modules<BN>;
  const auto pool = indexed(first + Convs * w, max_pool2d(2, stride(2)));
  if constexpr (Convs == 1) return sequential(vgg_conv_at<BN>(ch, first), pool);
  else return sequential(vgg_conv_at<BN>(ch, first), numbered_from(first + w, repeat(Convs - 1, vgg_conv<BN>(ch)), w), pool);
}
/// Index in `features` of the module after a stage of `Convs` convolutions from `first` on.
template <bool BN, int Convs>
constexpr std::int64_t vgg_stage_end(std::int64_t first) { return first + Convs * vgg_conv_modules<BN> + 1; }

}  // namespace detail

/// torchvision VGG: five stages of S1..S5 3×3 convolutions (64, 128, 256, 512, 512 channels),
/// AdaptiveAvgPool2d(7, 7), classifier Linear(25088, 4096) → ReLU(inplace) → Dropout(0.5) →
/// Linear(4096, 4096) → ReLU(inplace) → Dropout(0.5) → Linear(4096, classes). Module names are
/// torchvision's: features.0 .. (every conv, batch norm, ReLU and pooling numbered), avgpool,
/// classifier.0 .. classifier.6.
template <bool BN, int S1, int S2, int S3, int S4, int S5>
constexpr auto vgg(std::int64_t image, std::int64_t classes) {
  using namespace detail;
  constexpr std::int64_t f2 = vgg_stage_end<BN, S1>(0), f3 = vgg_stage_end<BN, S2>(f2), f4 = vgg_stage_end<BN, S3>(f3),
                         f5 = vgg_stage_end<BN, S4>(f4);
  return sequential(input(3, image, image),
                    named("features", sequential(vgg_stage<BN, S1>(64, 0), vgg_stage<BN, S2>(128, f2), vgg_stage<BN, S3>(256, f3),
                                                 vgg_stage<BN, S4>(512, f4), vgg_stage<BN, S5>(512, f5))),
                    named("avgpool", adaptive_avg_pool2d(7, 7)), flatten(),
                    named("classifier", sequential(indexed(0, linear(4096)), indexed(1, relu_inplace()), indexed(2, dropout(50)),
                                                   indexed(3, linear(4096)), indexed(4, relu_inplace()), indexed(5, dropout(50)),
                                                   indexed(6, linear(classes)))));
}
constexpr auto vgg11(std::int64_t image = 224, std::int64_t classes = 1000) { return vgg<false, 1, 1, 2, 2, 2>(image, classes); }
constexpr auto vgg11_bn(std::int64_t image = 224, std::int64_t classes = 1000) { return vgg<true, 1, 1, 2, 2, 2>(image, classes); }
constexpr auto vgg16(std::int64_t image = 224, std::int64_t classes = 1000) { return vgg<false, 2, 2, 3, 3, 3>(image, classes); }
constexpr auto vgg16_bn(std::int64_t image = 224, std::int64_t classes = 1000) { return vgg<true, 2, 2, 3, 3, 3>(image, classes); }

// --- MobileNetV2 / V3, EfficientNet ------------------------------------------------------------

namespace detail {

/// torchvision's _make_divisible(v, 8): round to a multiple of 8, never below 90% of v.
constexpr std::int64_t make_divisible(std::int64_t v, std::int64_t divisor = 8) {
  std::int64_t r = (v + divisor / 2) / divisor * divisor;
  if (r < divisor) r = divisor;
  if (10 * r < 9 * v) r += divisor;
  return r;
}

// Module names inside the blocks are torchvision's (torchvision/ops/misc.py Conv2dNormActivation,
// an nn.Sequential of conv 0, norm 1, activation 2; models/mobilenetv2.py InvertedResidual.conv;
// models/mobilenetv3.py InvertedResidual.block; models/efficientnet.py MBConv.block and
// stochastic_depth): features.3.conv.0.0, features.2.0.block.1.0.

/// Conv2dNormActivation: Conv2d(k, stride, padding (k-1)/2, no bias) → BatchNorm2d → `act`.
constexpr auto conv_bn_act(std::int64_t out, std::int64_t k, std::int64_t s, layer act) {
  return sequential(indexed(0, conv2d(out, k, stride(s), padding((k - 1) / 2), no_bias)), indexed(1, batch_norm()), indexed(2, act));
}
/// The same with a depthwise convolution (groups = channels).
constexpr auto dw_bn_act(std::int64_t k, std::int64_t s, layer act) {
  return sequential(indexed(0, depthwise_conv2d(k, stride(s), padding((k - 1) / 2), no_bias)), indexed(1, batch_norm()), indexed(2, act));
}
/// A 1×1 projection without activation: Conv2d(1×1, no bias) → BatchNorm2d, modules `first` and
/// `first` + 1 of the enclosing nn.Sequential (0 and 1: a Conv2dNormActivation without activation).
constexpr auto conv_bn(std::int64_t out, std::int64_t first = 0) {
  return sequential(indexed(first, conv2d(out, 1, no_bias)), indexed(first + 1, batch_norm()));
}

/// MobileNetV2 InvertedResidual body (its `conv`): [1×1 expand to `hidden` → BN → ReLU6] → 3×3
/// depthwise (stride) → BN → ReLU6 → 1×1 project to `out` → BN (plain modules 2 and 3 of `conv`).
/// ReLU6 is in place (Conv2dNormActivation).
constexpr auto mbv2_body(std::int64_t out, std::int64_t hidden, std::int64_t s) {
  return sequential(named("conv", sequential(indexed(0, conv_bn_act(hidden, 1, 1, relu6_inplace())), indexed(1, dw_bn_act(3, s, relu6_inplace())), conv_bn(out, 2))));
}
constexpr auto mbv2_body_no_expand(std::int64_t out, std::int64_t s) {
  return sequential(named("conv", sequential(indexed(0, dw_bn_act(3, s, relu6_inplace())), conv_bn(out, 1))));
}
/// `n` blocks of one MobileNetV2 stage after its first: stride 1, x + conv(x) (out of place);
/// torchvision's features.`first`...
constexpr auto mbv2_repeats(std::int64_t n, std::int64_t c, std::int64_t t, std::int64_t first) {
  return numbered_from(first, repeat(n, residual(mbv2_body(c, c * t, 1))));
}

/// MobileNetV3 block body (torchvision InvertedResidual): [1×1 expand → BN → act] → k×k
/// depthwise → BN → act → [squeeze-excitation (ReLU, Hardsigmoid)] → 1×1 project → BN.
/// act is ReLU(inplace) or Hardswish(inplace).
template <bool Expand, bool SE>
constexpr auto mbv3_body(std::int64_t k, std::int64_t exp, std::int64_t out, bool hs, std::int64_t s) {
  const layer act = hs ? hardswish_inplace() : relu_inplace();
  const auto dw = dw_bn_act(k, s, act);
  const auto se = squeeze_excitation(make_divisible(exp / 4), se_activation::relu, se_gate::hardsigmoid);
  // its `block`: the Conv2dNormActivations and SqueezeExcitation numbered in order
  if constexpr (Expand && SE) return sequential(named("block", sequential(indexed(0, conv_bn_act(exp, 1, 1, act)), indexed(1, dw), indexed(2, se), indexed(3, conv_bn(out)))));
  else if constexpr (Expand) return sequential(named("block", sequential(indexed(0, conv_bn_act(exp, 1, 1, act)), indexed(1, dw), indexed(2, conv_bn(out)))));
  else if constexpr (SE) return sequential(named("block", sequential(indexed(0, dw), indexed(1, se), indexed(2, conv_bn(out)))));
  else return sequential(named("block", sequential(indexed(0, dw), indexed(1, conv_bn(out)))));
}

/// EfficientNet MBConv body: [1×1 expand → BN → SiLU] → k×k depthwise → BN → SiLU →
/// squeeze-excitation (squeeze = in/4, SiLU(inplace), Sigmoid) → 1×1 project → BN. SiLUs are in
/// place (Conv2dNormActivation).
template <bool Expand>
constexpr auto mbconv_body(std::int64_t in, std::int64_t exp, std::int64_t out, std::int64_t k, std::int64_t s) {
  const auto se = squeeze_excitation(in / 4 > 1 ? in / 4 : 1, se_activation::silu_inplace, se_gate::sigmoid);
  if constexpr (Expand)
    return sequential(named("block", sequential(indexed(0, conv_bn_act(exp, 1, 1, silu_inplace())), indexed(1, dw_bn_act(k, s, silu_inplace())), indexed(2, se),
                                     indexed(3, conv_bn(out)))));
  else return sequential(named("block", sequential(indexed(0, dw_bn_act(k, s, silu_inplace())), indexed(1, se), indexed(2, conv_bn(out)))));
}
/// An MBConv stage: its first block (stride `s`, in → out) and `n - 1` residual blocks
/// (stochastic depth, then `result += input`).
/// Its blocks are the stage's modules 0, 1, ... (torchvision's features.2.1).
constexpr auto mbconv_stage(std::int64_t n, std::int64_t t, std::int64_t k, std::int64_t s, std::int64_t in, std::int64_t out,
                            std::int64_t sd_per_mille) {
  return sequential(indexed(0, mbconv_body<true>(in, in * t, out, k, s)),
                    numbered_from(1, repeat(n - 1, residual_inplace(mbconv_body<true>(out, out * t, out, k, 1), named("stochastic_depth", stochastic_depth(sd_per_mille))))));
}

}  // namespace detail

/// torchvision mobilenet_v2 (width 1.0): Conv 3×3/2 (32) → 17 inverted residuals (t, c, n, s:
/// 1,16,1,1 · 6,24,2,2 · 6,32,3,2 · 6,64,4,2 · 6,96,3,1 · 6,160,3,2 · 6,320,1,1) → Conv 1×1 (1280)
/// → global average pool → Dropout(0.2) → Linear(1280, classes).
constexpr auto mobilenet_v2(std::int64_t image = 224, std::int64_t classes = 1000) {
  using namespace detail;
  // torchvision's features.0 .. features.18 and their modules (features.3.conv.0.0)
  auto features = sequential(indexed(0, conv_bn_act(32, 3, 2, relu6_inplace())), indexed(1, mbv2_body_no_expand(16, 1)),
                             indexed(2, mbv2_body(24, 16 * 6, 2)), mbv2_repeats(1, 24, 6, 3),
                             indexed(4, mbv2_body(32, 24 * 6, 2)), mbv2_repeats(2, 32, 6, 5),
                             indexed(7, mbv2_body(64, 32 * 6, 2)), mbv2_repeats(3, 64, 6, 8),
                             indexed(11, mbv2_body(96, 64 * 6, 1)), mbv2_repeats(2, 96, 6, 12),
                             indexed(14, mbv2_body(160, 96 * 6, 2)), mbv2_repeats(2, 160, 6, 15),
                             indexed(17, mbv2_body(320, 160 * 6, 1)), indexed(18, conv_bn_act(1280, 1, 1, relu6_inplace())));
  return sequential(input(3, image, image), named("features", features), adaptive_avg_pool2d(1, 1), flatten(),
                    named("classifier", sequential(indexed(0, dropout(20)), indexed(1, linear(classes)))));
}

/// torchvision mobilenet_v3_large: Conv 3×3/2 (16, Hardswish) → 15 bneck blocks (residuals are
/// `result += input`) → Conv 1×1 (960, Hardswish) → global average pool → Linear(960, 1280) →
/// Hardswish(inplace) → Dropout(0.2, inplace) → Linear(1280, classes).
constexpr auto mobilenet_v3_large(std::int64_t image = 224, std::int64_t classes = 1000) {
  using namespace detail;
  // torchvision's features.0 .. features.16 and their modules (features.4.block.2)
  auto features = sequential(
      indexed(0, conv_bn_act(16, 3, 2, hardswish_inplace())),
      indexed(1, residual_inplace(mbv3_body<false, false>(3, 16, 16, false, 1))),
      indexed(2, mbv3_body<true, false>(3, 64, 24, false, 2)),
      indexed(3, residual_inplace(mbv3_body<true, false>(3, 72, 24, false, 1))),
      indexed(4, mbv3_body<true, true>(5, 72, 40, false, 2)),
      numbered_from(5, repeat(2, residual_inplace(mbv3_body<true, true>(5, 120, 40, false, 1)))),
      indexed(7, mbv3_body<true, false>(3, 240, 80, true, 2)),
      indexed(8, residual_inplace(mbv3_body<true, false>(3, 200, 80, true, 1))),
      numbered_from(9, repeat(2, residual_inplace(mbv3_body<true, false>(3, 184, 80, true, 1)))),
      indexed(11, mbv3_body<true, true>(3, 480, 112, true, 1)),
      indexed(12, residual_inplace(mbv3_body<true, true>(3, 672, 112, true, 1))),
      indexed(13, mbv3_body<true, true>(5, 672, 160, true, 2)),
      numbered_from(14, repeat(2, residual_inplace(mbv3_body<true, true>(5, 960, 160, true, 1)))),
      indexed(16, conv_bn_act(960, 1, 1, hardswish_inplace())));
  return sequential(input(3, image, image), named("features", features), named("avgpool", adaptive_avg_pool2d(1, 1)), flatten(),
                    named("classifier", sequential(indexed(0, linear(1280)), indexed(1, hardswish_inplace()), indexed(2, dropout_inplace(20)),
                                                   indexed(3, linear(classes)))));
}

/// torchvision efficientnet_b0: Conv 3×3/2 (32, SiLU) → 16 MBConv blocks (expand, kernel,
/// stride, in, out, layers: 1,3,1,32,16,1 · 6,3,2,16,24,2 · 6,5,2,24,40,2 · 6,3,2,40,80,3 ·
/// 6,5,1,80,112,3 · 6,5,2,112,192,4 · 6,3,1,192,320,1; stochastic depth 0.2·block/16 on the
/// residual blocks) → Conv 1×1 (1280, SiLU) → global average pool → Dropout(0.2, inplace) →
/// Linear(1280, classes).
constexpr auto efficientnet_b0(std::int64_t image = 224, std::int64_t classes = 1000) {
  using namespace detail;
  // torchvision's features.0 .. features.8, the stages' blocks features.2.0, features.2.1, ... and
  // their modules (features.2.0.block.1.0)
  auto features = sequential(indexed(0, conv_bn_act(32, 3, 2, silu_inplace())), named("1.0", mbconv_body<false>(32, 32, 16, 3, 1)),
                             indexed(2, mbconv_stage(2, 6, 3, 2, 16, 24, 200 * 2 / 16)), indexed(3, mbconv_stage(2, 6, 5, 2, 24, 40, 200 * 4 / 16)),
                             indexed(4, mbconv_stage(3, 6, 3, 2, 40, 80, 200 * 6 / 16)), indexed(5, mbconv_stage(3, 6, 5, 1, 80, 112, 200 * 9 / 16)),
                             indexed(6, mbconv_stage(4, 6, 5, 2, 112, 192, 200 * 12 / 16)), named("7.0", mbconv_body<true>(192, 192 * 6, 320, 3, 1)),
                             indexed(8, conv_bn_act(1280, 1, 1, silu_inplace())));
  return sequential(input(3, image, image), named("features", features), named("avgpool", adaptive_avg_pool2d(1, 1)), flatten(),
                    named("classifier", sequential(indexed(0, dropout_inplace(20)), indexed(1, linear(classes)))));
}

// --- DenseNet -----------------------------------------------------------------------------------

namespace detail {

/// torchvision _DenseLayer (memory_efficient=False) as x ↦ cat(x, layer(x)): BN → ReLU(inplace)
/// → Conv 1×1 (bn_size·growth) → BN → ReLU(inplace) → Conv 3×3 (growth). torchvision keeps the
/// block's features in a list and each layer concatenates all of them into a new tensor that
/// its first BatchNorm keeps: the same tensors, of the same sizes, as this chain of
/// concatenations (the list's separate pieces, not kept by autograd, are not modeled).
/// Module names as torchvision/models/densenet.py gives them: _DenseLayer's norm1, relu1, conv1,
/// norm2, relu2, conv2.
constexpr auto dense_layer(std::int64_t growth, std::int64_t bn_size) {
  return parallel(merge_kind::concat, sequential(),
                  sequential(named("norm1", batch_norm()), named("relu1", relu_inplace()), named("conv1", conv2d(bn_size * growth, 1, no_bias)),
                             named("norm2", batch_norm()), named("relu2", relu_inplace()), named("conv2", conv2d(growth, 3, padding(1), no_bias))));
}

/// "denselayer1" .. "denselayer64": _DenseBlock's keys ("denselayer%d" % (i + 1), densenet.py),
/// in static storage for named().
struct dense_layer_name_texts {
  char text[64][13]{};
};
inline constexpr dense_layer_name_texts dense_layer_names = [] {
  dense_layer_name_texts t{};
  for (int k = 0; k < 64; ++k) {
    int at = 0;
    for (const char* p = "denselayer"; *p; ++p) t.text[k][at++] = *p;
    if (k + 1 >= 10) t.text[k][at++] = static_cast<char>('0' + (k + 1) / 10);
    t.text[k][at] = static_cast<char>('0' + (k + 1) % 10);
  }
  return t;
}();

template <std::size_t... I>
constexpr auto dense_block(std::index_sequence<I...>, std::int64_t growth, std::int64_t bn_size) {
  static_assert(sizeof...(I) <= 64, "a dense block of more than 64 layers (dense_layer_names)");
  return sequential(named(dense_layer_names.text[I], dense_layer(growth, bn_size))...);
}
/// _Transition: BN → ReLU(inplace) → Conv 1×1 (`out`) → AvgPool2d(2, 2).
constexpr auto dense_transition(std::int64_t out) {
  return sequential(named("norm", batch_norm()), named("relu", relu_inplace()), named("conv", conv2d(out, 1, no_bias)),
                    named("pool", avg_pool2d(2, stride(2))));
}

}  // namespace detail

/// torchvision DenseNet with blocks of B1..B4 layers, growth rate `growth`, `init` stem
/// channels, bottleneck factor 4: stem Conv 7×7/2 → BN → ReLU → MaxPool 3/2, dense blocks with
/// halving transitions, norm5, ReLU(inplace), global average pool, Linear(classes).
template <std::size_t B1, std::size_t B2, std::size_t B3, std::size_t B4>
constexpr auto densenet(std::int64_t growth, std::int64_t init, std::int64_t image, std::int64_t classes) {
  using namespace detail;
  constexpr std::int64_t bn_size = 4;
  const auto c1 = init + static_cast<std::int64_t>(B1) * growth;
  const auto c2 = c1 / 2 + static_cast<std::int64_t>(B2) * growth;
  const auto c3 = c2 / 2 + static_cast<std::int64_t>(B3) * growth;
  // torchvision's module names (features.denseblock1.denselayer3.conv1)
  auto features = sequential(named("conv0", conv2d(init, 7, stride(2), padding(3), no_bias)), named("norm0", batch_norm()),
                             named("relu0", relu_inplace()), named("pool0", max_pool2d(3, stride(2), padding(1))),
                             named("denseblock1", dense_block(std::make_index_sequence<B1>{}, growth, bn_size)), named("transition1", dense_transition(c1 / 2)),
                             named("denseblock2", dense_block(std::make_index_sequence<B2>{}, growth, bn_size)), named("transition2", dense_transition(c2 / 2)),
                             named("denseblock3", dense_block(std::make_index_sequence<B3>{}, growth, bn_size)), named("transition3", dense_transition(c3 / 2)),
                             named("denseblock4", dense_block(std::make_index_sequence<B4>{}, growth, bn_size)), named("norm5", batch_norm()));
  return sequential(input(3, image, image), named("features", features), relu_inplace(), adaptive_avg_pool2d(1, 1), flatten(),
                    named("classifier", linear(classes)));
}
constexpr auto densenet121(std::int64_t image = 224, std::int64_t classes = 1000) { return densenet<6, 12, 24, 16>(32, 64, image, classes); }

// --- Swin Transformer ---------------------------------------------------------------------------

namespace detail {

/// torchvision SwinTransformerBlock: x + SD(attn(LN(x))), then x + SD(MLP(LN(x))) with a GELU
/// MLP of 4·dim (its Dropout(0.0) layers are identities). `sd_per_mille` 0: no stochastic depth.
/// Module names are torchvision's (norm1, attn, stochastic_depth, norm2, mlp.0 Linear, mlp.1 GELU,
/// mlp.3 Linear).
constexpr auto swin_block(std::int64_t dim, std::int64_t num_heads, std::int64_t window, std::int64_t shift, std::int64_t sd_per_mille) {
  return sequential(residual(named("norm1", layer_norm()), named("attn", window_attention(heads(num_heads), window, shift)),
                             named("stochastic_depth", stochastic_depth(sd_per_mille))),
                    residual(named("norm2", layer_norm()), named("mlp.0", linear(4 * dim)), named("mlp.1", gelu()), named("mlp.3", linear(dim)),
                             named("stochastic_depth", stochastic_depth(sd_per_mille))));
}
/// Two blocks: unshifted, then shifted by window/2.
constexpr auto swin_pair(std::int64_t dim, std::int64_t num_heads, std::int64_t window, std::int64_t sd_per_mille) {
  return sequential(swin_block(dim, num_heads, window, 0, sd_per_mille), swin_block(dim, num_heads, window, window / 2, sd_per_mille));
}

}  // namespace detail

/// torchvision SwinTransformer (v1) with stage depths 2, 2·p2, 2·p3, 2·p4 (pairs of unshifted and
/// shifted blocks; every torchvision Swin has depth 2 in stage 1), embedding width `c`, heads
/// h1..h4, 7×7 windows, patch 4, stochastic depth (0 for the very first block): patch embedding
/// Conv 4×4/4 → Permute → LayerNorm, stages with PatchMerging between them, LayerNorm, Permute,
/// global average pool, Linear(8c, classes).
constexpr auto swin(std::int64_t p2, std::int64_t p3, std::int64_t p4, std::int64_t c, std::int64_t h1, std::int64_t h2,
                    std::int64_t h3, std::int64_t h4, std::int64_t image, std::int64_t classes) {
  using namespace detail;
  constexpr std::int64_t w = 7, sd = 100;  // a nonzero stochastic-depth probability (per mille)
  // torchvision's features.0 (patch embedding) .. features.7 (stage 4), norm, permute, avgpool, flatten, head
  // (a stage's blocks are repeated in pairs: numbered_from(0, ..., 2) numbers them one by one)
  auto features = sequential(named("0", sequential(named("0", conv2d(c, 4, stride(4))), named("1", permute(1, 2, 0)), named("2", layer_norm()))),
                             named("1.0", swin_block(c, h1, w, 0, 0)), named("1.1", swin_block(c, h1, w, w / 2, sd)),
                             named("2", patch_merging()), named("3", numbered_from(0, repeat(p2, swin_pair(2 * c, h2, w, sd)), 2)),
                             named("4", patch_merging()), named("5", numbered_from(0, repeat(p3, swin_pair(4 * c, h3, w, sd)), 2)),
                             named("6", patch_merging()), named("7", numbered_from(0, repeat(p4, swin_pair(8 * c, h4, w, sd)), 2)));
  return sequential(input(3, image, image), named("features", features), named("norm", layer_norm()), named("permute", permute(2, 0, 1)),
                    named("avgpool", adaptive_avg_pool2d(1, 1)), named("flatten", flatten()), named("head", linear(classes)));
}
constexpr auto swin_t(std::int64_t image = 224, std::int64_t classes = 1000) { return swin(1, 3, 1, 96, 3, 6, 12, 24, image, classes); }

}  // namespace gpubudget::models
