// gpubudget/layers/vision.hpp — ViT patch embedding.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layers/conv.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// ViT input stage on [C, H, W]: Conv2d(C, width, patch, stride=patch) → flatten → tokens,
/// a learned class token prepended (optional) and learned positions added: [tokens, width].
constexpr layer patch_embedding(std::int64_t width, std::int64_t patch, bool class_token = true) {
  layer l{}; l.kind = op::patch_embedding; l.a[0] = width; l.a[1] = patch; l.a[2] = class_token; return l;
}

namespace detail::rules {

/// Tokens a patch embedding produces: (H/p)·(W/p) (+1 with a class token). 448² at p=16: 785.
constexpr std::int64_t patch_tokens(std::int64_t h, std::int64_t w, std::int64_t patch, bool class_token) {
  return (h / patch) * (w / patch) + (class_token ? 1 : 0);
}

constexpr value lower_patch_embedding(layer_ctx& c, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 3) tensor_rank_unsupported();
  const auto C = x.s[0], D = c.L.a[0], P = c.L.a[1];
  const bool cls = c.L.a[2] != 0;
  if (D <= 0 || P <= 0) invalid_layer_argument();
  if (x.s[1] < P || x.s[2] < P) output_size_not_positive();
  const auto grid = (x.s[1] / P) * (x.s[2] / P);
  const auto T = grid + (cls ? 1 : 0);
  (void)C;
  value conv = conv_op(c, x, conv2d(D, P, stride(P)), 0);  // Conv2d(C, D, P, stride=P)
  value tok = s.view(conv, make_shape(grid, D));  // reshape + permute: a view
  s.release(conv);
  if (cls) {  // torch.cat([class_token.expand(B, -1, -1), tokens], dim=1)
    value cat = add_parameter(c, tok, make_shape(T, D), D, 1);
    s.release(tok);
    tok = cat;
  }
  value pos = add_parameter(c, tok, tok.s, checked_mul(T, D), 2);  // + pos_embedding
  s.release(tok);
  return pos;
}

}  // namespace detail::rules
}  // namespace gpubudget
