// gpubudget/layers/vision.hpp — ViT patch embedding; a spatial transformer's sampling grid.
#pragma once
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/conv.hpp>

namespace gpubudget {

/// ViT input stage on [C, H, W]: Conv2d(C, width, patch, stride=patch) → flatten → tokens,
/// a learned class token prepended (optional) and learned positions added (optional: torchvision
/// adds them in its Encoder, see pos_embedding): [tokens, width].
struct patch_embedding_op {
  std::int64_t width = {};
  std::int64_t patch = {};
  flag class_token = {};
  flag positions = true;
};

/// Tokens a patch embedding produces: (H/p)·(W/p) (+1 with a class token). 448² at p=16: 785.
constexpr std::int64_t patch_tokens(std::int64_t h, std::int64_t w, std::int64_t patch, bool class_token) {
  return (h / patch) * (w / patch) + (class_token ? 1 : 0);
}

template <>
struct op_traits<patch_embedding_op> {
  static constexpr const char* name = "patch_embedding";
  static constexpr detail::value lower(detail::layer_ctx& c, const patch_embedding_op& op, const detail::value& x) {
    auto& s = c.s;
    if (x.s.rank != 3) detail::tensor_rank_unsupported();
    const auto D = op.width, P = op.patch;
    if (D <= 0 || P <= 0) detail::invalid_layer_argument();
    if (x.s[1] < P || x.s[2] < P) detail::require_input(false, detail::patch_larger_than_image, P, x.s);
    if (x.s[1] % P != 0 || x.s[2] % P != 0) detail::require_input(false, detail::image_not_divisible_by_patch, P, x.s);
    const auto grid = (x.s[1] / P) * (x.s[2] / P);
    const auto T = grid + (op.class_token ? 1 : 0);
    detail::value conv = detail::convolution(c, x, detail::make_conv(false, 2, D, P, stride(P)), 0);  // Conv2d(C, D, P, stride=P)
    detail::value tok = s.view(conv, make_shape(grid, D));  // reshape + permute: a view
    s.release(conv);
    if (op.class_token) {  // torch.cat([class_token.expand(B, -1, -1), tokens], dim=1)
      detail::value cat = detail::add_parameter(c, tok, make_shape(T, D), D, 1);
      s.release(tok);
      tok = cat;
    }
    if (!op.positions) return tok;
    detail::value pos = detail::add_parameter(c, tok, tok.s, checked_mul(T, D), 2);  // + pos_embedding
    s.release(tok);
    return pos;
  }
  static constexpr std::int64_t flops(const patch_embedding_op& op, const shape& in, const shape& out) {
    const auto P = op.patch;
    const auto grid = P > 0 ? (in[1] / P) * (in[2] / P) : 0;
    return 2 * in[0] * P * P * op.width * grid + out.numel();
  }
};

constexpr layer patch_embedding(std::int64_t width, std::int64_t patch, bool class_token = true, bool positions = true) {
  return as_layer(patch_embedding_op{width, patch, class_token, positions});
}

/// x + a learned parameter shaped like one sample ([tokens, width]): torchvision's
/// `Encoder.pos_embedding` (`input + self.pos_embedding`), a new tensor, nothing saved. Unlike
/// learned_positions (GPT-2's nn.Embedding of arange), no index tensor and no lookup.
struct pos_embedding_op {};

template <>
struct op_traits<pos_embedding_op> {
  static constexpr const char* name = "pos_embedding";
  static constexpr detail::value lower(detail::layer_ctx& c, const pos_embedding_op&, const detail::value& x) {
    return detail::add_parameter(c, x, x.s, x.s.numel(), 0);
  }
};

constexpr layer pos_embedding() { return as_layer(pos_embedding_op{}); }

/// F.affine_grid(theta, size) of a spatial transformer (the PyTorch tutorial's STN): per sample a
/// [2, 3] affine matrix in, an [h, w, 2] sampling grid out (h, w: the size it is given, the image's).
/// It keeps nothing (AffineGridGenerator's backward reads the sizes); forward and backward each
/// build the base grid [h, w, 3] in fp32 (2.6 CPU probe, [2, 64, 64]: forward peak grid + 98,304 B,
/// backward +98,304 B beside theta's gradient). parallel(merge_kind::grid_sample, ...) reads the grid.
struct affine_grid_op {
  std::int64_t h = {}, w = {};
};

template <>
struct op_traits<affine_grid_op> {
  static constexpr const char* name = "affine_grid";
  static constexpr detail::value lower(detail::layer_ctx& c, const affine_grid_op& op, const detail::value& theta) {
    if (op.h <= 0 || op.w <= 0) detail::invalid_layer_argument();
    if (theta.s.rank != 2 || theta.s[0] != 2 || theta.s[1] != 3) detail::tensor_rank_unsupported();
    auto& s = c.s;
    const auto base_grid = s.bytes_of_value(make_shape(op.h, op.w, 3), dtype::fp32);
    return detail::pointwise(s, theta, make_shape(op.h, op.w, 2), theta.type, detail::keeps::nothing, 0, base_grid, base_grid);
  }
  static constexpr std::int64_t flops(const affine_grid_op&, const shape&, const shape& out) { return checked_mul(6, out.numel()); }
};

/// F.affine_grid(theta, [N, C, h, w]) on a per-sample [2, 3] theta (theta.view(-1, 2, 3)).
constexpr layer affine_grid(std::int64_t h, std::int64_t w) { return as_layer(affine_grid_op{h, w}); }

}  // namespace gpubudget
