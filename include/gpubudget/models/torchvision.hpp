// gpubudget/models/torchvision.hpp — torchvision 0.14 classification models, op for op as
// their modules run in training (in-place ReLUs and `out += identity`, LayerNorm2d's permutes,
// nn.MultiheadAttention's training path), parameterized by image size and class count.
#pragma once
#include <cstdint>

#include <gpubudget/gpubudget.hpp>

namespace gpubudget::models {

namespace detail {

/// torchvision.models.resnet.BasicBlock without / with a downsample branch.
constexpr auto basic_block(std::int64_t planes) {
  return sequential(residual_inplace(conv2d(planes, 3, padding(1), no_bias), batch_norm(), relu_inplace(),
                                     conv2d(planes, 3, padding(1), no_bias), batch_norm()),
                    relu_inplace());
}
constexpr auto basic_block_down(std::int64_t planes, std::int64_t s) {
  return sequential(parallel(merge_kind::add_inplace,
                             sequential(conv2d(planes, 3, stride(s), padding(1), no_bias), batch_norm(), relu_inplace(),
                                        conv2d(planes, 3, padding(1), no_bias), batch_norm()),
                             sequential(conv2d(planes, 1, stride(s), no_bias), batch_norm())),
                    relu_inplace());
}
/// torchvision.models.resnet.Bottleneck (stride on the 3×3, "ResNet v1.5"); `width` is
/// planes · width_per_group / 64.
constexpr auto bottleneck_main(std::int64_t planes, std::int64_t width, std::int64_t s) {
  return sequential(conv2d(width, 1, no_bias), batch_norm(), relu_inplace(), conv2d(width, 3, stride(s), padding(1), no_bias),
                    batch_norm(), relu_inplace(), conv2d(planes * 4, 1, no_bias), batch_norm());
}
constexpr auto bottleneck(std::int64_t planes, std::int64_t width) {
  return sequential(residual_inplace(bottleneck_main(planes, width, 1)), relu_inplace());
}
constexpr auto bottleneck_down(std::int64_t planes, std::int64_t width, std::int64_t s) {
  return sequential(parallel(merge_kind::add_inplace, bottleneck_main(planes, width, s),
                             sequential(conv2d(planes * 4, 1, stride(s), no_bias), batch_norm())),
                    relu_inplace());
}

constexpr auto resnet_stem(std::int64_t image) {
  return sequential(input(3, image, image), conv2d(64, 7, stride(2), padding(3), no_bias), batch_norm(), relu_inplace(),
                    max_pool2d(3, stride(2), padding(1)));
}
constexpr auto resnet_head(std::int64_t classes) { return sequential(adaptive_avg_pool2d(1, 1), flatten(), linear(classes)); }

/// ConvNeXt's LayerNorm2d: permute to channels-last, LayerNorm, permute back.
constexpr auto layer_norm_2d() { return sequential(permute(1, 2, 0), layer_norm(), permute(2, 0, 1)); }

/// torchvision CNBlock: the depthwise conv's input is channels-last-strided (it comes out of a
/// permute + in-place residual add). `drop` = stochastic depth > 0.
constexpr auto cn_block(std::int64_t dim, bool drop) {
  return residual_inplace(depthwise_conv2d(7, padding(3), channels_last_input), permute(1, 2, 0), layer_norm(), linear(4 * dim),
                          gelu(), linear(dim), permute(2, 0, 1), layer_scale(), stochastic_depth(drop ? 1 : 0));
}

}  // namespace detail

// --- ResNet -------------------------------------------------------------------------------------

/// resnet18 / resnet34: BasicBlock stages of {2,2,2,2} / {3,4,6,3} blocks.
constexpr auto resnet_basic(std::int64_t b1, std::int64_t b2, std::int64_t b3, std::int64_t b4, std::int64_t image, std::int64_t classes) {
  using namespace detail;
  return sequential(resnet_stem(image), repeat(b1, basic_block(64)), basic_block_down(128, 2), repeat(b2 - 1, basic_block(128)),
                    basic_block_down(256, 2), repeat(b3 - 1, basic_block(256)), basic_block_down(512, 2), repeat(b4 - 1, basic_block(512)),
                    resnet_head(classes));
}
constexpr auto resnet18(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_basic(2, 2, 2, 2, image, classes); }
constexpr auto resnet34(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_basic(3, 4, 6, 3, image, classes); }

/// Bottleneck ResNets: resnet50 {3,4,6,3}, resnet101 {3,4,23,3}, resnet152 {3,8,36,3};
/// `width_factor` 2 gives wide_resnet50_2.
constexpr auto resnet_bottleneck(std::int64_t b1, std::int64_t b2, std::int64_t b3, std::int64_t b4, std::int64_t image,
                                 std::int64_t classes, std::int64_t width_factor = 1) {
  using namespace detail;
  const auto w = width_factor;
  return sequential(resnet_stem(image), bottleneck_down(64, 64 * w, 1), repeat(b1 - 1, bottleneck(64, 64 * w)),
                    bottleneck_down(128, 128 * w, 2), repeat(b2 - 1, bottleneck(128, 128 * w)), bottleneck_down(256, 256 * w, 2),
                    repeat(b3 - 1, bottleneck(256, 256 * w)), bottleneck_down(512, 512 * w, 2), repeat(b4 - 1, bottleneck(512, 512 * w)),
                    resnet_head(classes));
}
constexpr auto resnet50(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 4, 6, 3, image, classes); }
constexpr auto resnet101(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 4, 23, 3, image, classes); }
constexpr auto resnet152(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 8, 36, 3, image, classes); }
constexpr auto wide_resnet50_2(std::int64_t image = 224, std::int64_t classes = 1000) { return resnet_bottleneck(3, 4, 6, 3, image, classes, 2); }

// --- Vision Transformer -------------------------------------------------------------------------

/// torchvision VisionTransformer: patch embedding (+ class token, + positions), `layers`
/// EncoderBlocks (nn.MultiheadAttention, GELU MLP), final LayerNorm, head on the class token.
/// Dropout(0.0) layers are identities and are left out.
constexpr auto vision_transformer(std::int64_t patch, std::int64_t layers, std::int64_t width, std::int64_t num_heads,
                                  std::int64_t mlp, std::int64_t image, std::int64_t classes) {
  return sequential(input(3, image, image), patch_embedding(width, patch),
                    repeat(layers, transformer_block_mlp(width, heads(num_heads), mlp, attention_impl::torch_mha)), layer_norm(),
                    select_token(0), linear(classes));
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
  auto features = sequential(conv2d(c, 4, stride(4)), layer_norm_2d(), cn_block(c, false), repeat(d1 - 1, cn_block(c, true)),
                             layer_norm_2d(), conv2d(2 * c, 2, stride(2)), repeat(d2, cn_block(2 * c, true)),
                             layer_norm_2d(), conv2d(4 * c, 2, stride(2)), repeat(d3, cn_block(4 * c, true)),
                             layer_norm_2d(), conv2d(8 * c, 2, stride(2)), repeat(d4, cn_block(8 * c, true)));
  features.nodes[0].flags.frozen = frozen_backbone;
  features.nodes[0].name = "features";
  return sequential(input(3, image, image), features, adaptive_avg_pool2d(1, 1), named("classifier", sequential(layer_norm_2d(), flatten(), linear(classes))));
}
constexpr auto convnext_tiny(std::int64_t image = 224, std::int64_t classes = 1000, bool frozen_backbone = false) {
  return convnext(3, 3, 9, 3, 96, image, classes, frozen_backbone);
}
constexpr auto convnext_small(std::int64_t image = 224, std::int64_t classes = 1000, bool frozen_backbone = false) {
  return convnext(3, 3, 27, 3, 96, image, classes, frozen_backbone);
}

}  // namespace gpubudget::models
