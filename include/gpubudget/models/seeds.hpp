// gpubudget/models/seeds.hpp — the models of the five seed reports, as families with their sizes
// as parameters (exact definitions: benchmarks/accuracy/reference/README.md and
// benchmarks/accuracy/measure.py).
#pragma once
#include <cstdint>

#include <gpubudget/gpubudget.hpp>

namespace gpubudget::models {

/// Seed 000: a BEV head: stem Conv3×3 → BN → ReLU, `layers` local-attention layers over a
/// `size`×`size` map with `channels` channels (K×K neighbourhood, unfold or depthwise), and a
/// 1×1 conv to `classes`.
template <std::int64_t Layers = 2>
constexpr auto bev_local_attention(local_attention_impl impl, std::int64_t channels = 64, std::int64_t size = 64,
                                   std::int64_t num_heads = 4, std::int64_t kernel = 7, std::int64_t classes = 10) {
  return sequential(input(channels, size, size), conv2d(channels, 3, padding(1)), batch_norm(), relu(),
                    repeat<Layers>(local_attention(heads(num_heads), kernel, impl)), conv2d(classes, 1));
}
/// The same with the layer count chosen at run time.
constexpr auto bev_local_attention_n(local_attention_impl impl, std::int64_t layers, std::int64_t channels = 64, std::int64_t size = 64,
                                     std::int64_t num_heads = 4, std::int64_t kernel = 7, std::int64_t classes = 10) {
  return sequential(input(channels, size, size), conv2d(channels, 3, padding(1)), batch_norm(), relu(),
                    repeat(layers, local_attention(heads(num_heads), kernel, impl)), conv2d(classes, 1));
}

/// Seed 001: ViT at `image`² shared by SA(target), SA(pair) and PWCA paths.
constexpr auto dual_vit_pwca(std::int64_t image = 448, std::int64_t classes = 200, std::int64_t patch = 16, std::int64_t depth = 12,
                             std::int64_t width = 768, std::int64_t num_heads = 12) {
  return sequential(input(2, 3, image, image), dual_cross_attention_vit(patch, depth, width, heads(num_heads), 4 * width, classes));
}

/// Seed 002: embedding of `num_ids` ids over `nodes` nodes, two GAT layers (`num_heads` ×
/// `per_head`) over `edges` edges, a linear classifier. One sample = one graph.
constexpr auto gat_graph(std::int64_t nodes = 2000, std::int64_t edges = 20000, std::int64_t num_ids = 5000, std::int64_t embed = 64,
                         std::int64_t num_heads = 4, std::int64_t per_head = 32, std::int64_t classes = 2) {
  return sequential(tokens(nodes), embedding(num_ids, embed), gat(heads(num_heads), per_head, edges),
                    gat(heads(num_heads), per_head, edges), linear(classes));
}

/// Seed 004's per-frame CNN: three stages of Conv3×3 → BN → ReLU → MaxPool2, global pooling.
constexpr auto frame_cnn(std::int64_t c1, std::int64_t c2, std::int64_t c3) {
  return sequential(conv2d(c1, 3, padding(1)), batch_norm(), relu(), max_pool2d(2), conv2d(c2, 3, padding(1)), batch_norm(), relu(),
                    max_pool2d(2), conv2d(c3, 3, padding(1)), batch_norm(), relu(), max_pool2d(2), adaptive_avg_pool2d(1, 1), flatten());
}

namespace detail {
template <std::int64_t T>
constexpr auto frame_branch(std::int64_t c1, std::int64_t c2, std::int64_t c3, bool checkpoint) {
  auto cnn = shared(4, frame_cnn(c1, c2, c3));
  cnn.records[0].flags.checkpoint = checkpoint;
  return sequential(select_token(T), cnn);
}
template <std::int64_t... T>
constexpr auto frames(std::integer_sequence<std::int64_t, T...>, std::int64_t c1, std::int64_t c2, std::int64_t c3, bool checkpoint) {
  return parallel(merge_kind::stack, frame_branch<T>(c1, c2, c3, checkpoint)...);
}
}  // namespace detail

/// Seed 004: `Frames` frames of `image`² through one shared CNN (c1/c2/c3 channels, optionally
/// checkpointed per frame), features stacked, `blocks` pre-norm transformer blocks of width c3,
/// mean over frames, a regression head.
template <std::int64_t Frames = 5>
constexpr auto temporal_cnn_transformer(std::int64_t c1 = 64, std::int64_t c2 = 128, std::int64_t c3 = 256, std::int64_t image = 96,
                                        std::int64_t blocks = 2, std::int64_t num_heads = 4, bool checkpoint_frames = false) {
  return sequential(input(Frames, 3, image, image),
                    detail::frames(std::make_integer_sequence<std::int64_t, Frames>{}, c1, c2, c3, checkpoint_frames),
                    repeat(blocks, transformer_block(c3, heads(num_heads))), mean_over(0), linear(1));
}

}  // namespace gpubudget::models
