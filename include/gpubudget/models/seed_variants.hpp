// gpubudget/models/seed_variants.hpp — seed models in the forms their reports' fixes need,
// built from public layers (the seed families themselves are in seeds.hpp):
//  * dual_vit_paths: seed 001's dual cross-attention ViT with every path of every block its own
//    unit, so that training::checkpoint_blocks checkpoints "SA target, SA pair, PWCA" per block;
//  * finetune_standin: seed 003's backbone + decoder with named stages, so that
//    training::train_only expresses stage 1 and the progressive-unfreezing phases.
#pragma once
#include <cstdint>
#include <utility>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>

namespace gpubudget::models {

namespace detail {
template <std::int32_t Id>
constexpr auto vit_sa_block(std::int64_t width, std::int64_t num_heads) {
  return shared(Id, residual(layer_norm(), attention(width, heads(num_heads))),
                residual(layer_norm(), linear(4 * width), gelu(), linear(width)));
}
template <std::int32_t Id>
constexpr auto vit_pwca_block(std::int64_t width, std::int64_t num_heads, std::int64_t kv) {
  return shared(Id, residual(layer_norm(), attention(width, heads(num_heads), kv_tokens(kv))),
                residual(layer_norm(), linear(4 * width), gelu(), linear(width)));
}
/// One block of the three paths on the stacked state [3, tokens, width] = (x, y, p). Each path's
/// application is a repeat of 1, i.e. a unit training::checkpoint_blocks checkpoints.
template <std::int32_t Id>
constexpr auto dual_paths_block(std::int64_t width, std::int64_t num_heads, std::int64_t kv) {
  return parallel(merge_kind::stack, sequential(select_token(0), repeat(1, vit_sa_block<Id>(width, num_heads))),
                  sequential(select_token(1), repeat(1, vit_sa_block<Id>(width, num_heads))),
                  sequential(select_token(2), repeat(1, vit_pwca_block<Id>(width, num_heads, kv))));
}
template <std::int32_t... I>
constexpr auto dual_paths_blocks(std::integer_sequence<std::int32_t, I...>, std::int64_t width, std::int64_t num_heads, std::int64_t kv) {
  return sequential(dual_paths_block<I + 1>(width, num_heads, kv)...);
}
}  // namespace detail

/// Seed 001's network (the same parameters as dual_vit_pwca) as composable layers: image pair
/// [2, 3, image, image] -> x = embed(target), y = embed(pair), p = x; per block, the shared
/// weights run SA on x and y and PWCA on p with keys/values over 2·tokens (LayerNorm(cat(p, y))
/// is budgeted as one new [2·tokens, width] activation derived from p); heads on the class tokens
/// of x and p. Blocks have distinct weights (share ids 1..Depth); embedding and head are shared.
/// Within 1 % of dual_vit_pwca's budget (examples/dual_vit_pairwise_attention.cpp prints both).
template <std::int32_t Depth = 12>
constexpr auto dual_vit_paths(std::int64_t image = 448, std::int64_t classes = 200, std::int64_t patch = 16, std::int64_t width = 768,
                              std::int64_t num_heads = 12) {
  static_assert(Depth >= 1 && Depth < 100, "share ids 1..Depth must stay below the embedding's (100)");
  const auto tokens = (image / patch) * (image / patch) + 1;
  auto embed = shared(100, patch_embedding(width, patch));
  auto head = shared(101, layer_norm(), linear(classes));
  return sequential(input(2, 3, image, image),
                    parallel(merge_kind::stack, sequential(select_token(0), embed), sequential(select_token(1), embed),
                             sequential(select_token(0), embed)),
                    detail::dual_paths_blocks(std::make_integer_sequence<std::int32_t, Depth>{}, width, num_heads, 2 * tokens),
                    parallel(merge_kind::concat, sequential(select_token(0), select_token(0), head),
                             sequential(select_token(2), select_token(0), head)));
}

/// The train_only prefixes of finetune_standin's phases.
namespace finetune_phase {
inline constexpr const char* stage1 = "decoder";    ///< stage 1: backbone frozen, decoder trains
inline constexpr const char* phase1 = "unfreeze1";  ///< last backbone stage + decoder
inline constexpr const char* phase2 = "unfreeze2";  ///< last two backbone stages + decoder
inline constexpr const char* stage2 = nullptr;      ///< everything trains (phase 3)
}  // namespace finetune_phase

namespace detail {
constexpr auto up_block(std::int64_t ch) {
  return sequential(conv_transpose2d(ch, 2, stride(2)), batch_norm(), relu(), conv2d(ch, 3, padding(1)), batch_norm(), relu());
}
constexpr auto expert_block(std::int64_t ch) {
  return sequential(conv2d(ch, 3, padding(1)), batch_norm(), relu(), conv2d(ch, 3, padding(1)), batch_norm(), relu());
}
}  // namespace detail

/// Seed 003's stand-in: torchvision ConvNeXt-T's feature extractor (widths c, 2c, 4c, 8c, depths
/// 3/3/9/3: the same blocks and parameters as convnext_tiny's `features`) with stages named
/// stem, stage1..stage4, and a decoder: three ×2 up-sampling blocks to stride 4 (256/128/64
/// channels), seven expert branches of two 3×3 convs summed, a 1×1 head up-sampled ×4. Names
/// nest — unfreeze2 = (stage3, unfreeze1 = (stage4, decoder)) — so one train_only prefix selects
/// "the last k stages and the decoder" (see finetune_phase).
constexpr auto finetune_standin(std::int64_t image = 384, std::int64_t c = 96) {
  using detail::cn_block;
  using detail::layer_norm_2d;
  auto experts = parallel(merge_kind::add, detail::expert_block(64), detail::expert_block(64), detail::expert_block(64),
                          detail::expert_block(64), detail::expert_block(64), detail::expert_block(64), detail::expert_block(64));
  auto decoder = named("decoder", sequential(detail::up_block(256), detail::up_block(128), detail::up_block(64), experts, conv2d(1, 1),
                                             conv_transpose2d(1, 4, stride(4))));
  auto stage3 = named("stage3", sequential(layer_norm_2d(), conv2d(4 * c, 2, stride(2)), repeat(9, cn_block(4 * c, true))));
  auto stage4 = named("stage4", sequential(layer_norm_2d(), conv2d(8 * c, 2, stride(2)), repeat(3, cn_block(8 * c, true))));
  return sequential(input(3, image, image), named("stem", sequential(conv2d(c, 4, stride(4)), layer_norm_2d())),
                    named("stage1", sequential(cn_block(c, false), repeat(2, cn_block(c, true)))),
                    named("stage2", sequential(layer_norm_2d(), conv2d(2 * c, 2, stride(2)), repeat(3, cn_block(2 * c, true)))),
                    named("unfreeze2", sequential(stage3, named("unfreeze1", sequential(stage4, decoder)))));
}

}  // namespace gpubudget::models
