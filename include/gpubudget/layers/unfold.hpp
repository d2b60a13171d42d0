// gpubudget/layers/unfold.hpp — im2col (F.unfold) and the local attention built on it, with its
// depthwise-separable replacement (the two layers of seed report 000).
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// F.unfold(x, kernel, padding, stride) on [C, H, W] -> [C·k², L]: the buffer that grows k²-fold.
constexpr layer unfold(std::int64_t kernel, padding p = padding(0), stride s = stride(1)) {
  layer l{}; l.kind = op::unfold; l.a[0] = kernel; l.a[1] = p.value; l.a[2] = s.value; return l;
}

enum class local_attention_impl : std::int64_t {
  /// qkv = Conv2d(C, 3C, 1); k, v unfolded to [heads, C/heads, k², H·W]; scores = Σ_c q·k;
  /// softmax over the k² neighbours; Σ weights·v; output Conv2d(C, C, 1); residual add.
  unfold = 0,
  /// qkv = Conv2d(C, 3C, 1) → depthwise k×k; gate = sigmoid(Σ_head-channels q·k / √(C/heads));
  /// y = gate·v; GroupNorm(1, C); output Conv2d(C, C, 1); residual add.
  depthwise = 1,
};

/// Local (k×k neighbourhood) attention over a [C, H, W] map with `heads` heads.
constexpr layer local_attention(heads h, std::int64_t kernel, local_attention_impl impl) {
  layer l{}; l.kind = op::local_attention; l.a[0] = h.value; l.a[1] = kernel; l.a[2] = static_cast<std::int64_t>(impl); return l;
}

namespace detail::rules {

/// Bytes of F.unfold's output for a [B, C, H, W] input: B·C·k²·L elements.
constexpr std::int64_t unfold_bytes(std::int64_t batch, std::int64_t c, std::int64_t k, std::int64_t positions, dtype t) {
  return bytes_of(checked_mul(checked_mul(checked_mul(batch, c), k * k), positions), t);
}

constexpr shape unfolded_shape(const shape& in, std::int64_t k, std::int64_t pad, std::int64_t st) {
  if (in.rank != 3) tensor_rank_unsupported();
  if (k <= 0 || st <= 0 || pad < 0) invalid_layer_argument();
  const auto oh = (in[1] + 2 * pad - k) / st + 1, ow = (in[2] + 2 * pad - k) / st + 1;
  if (oh <= 0 || ow <= 0) output_size_not_positive();
  return make_shape(checked_mul(in[0], k * k), checked_mul(oh, ow));
}

constexpr value lower_unfold(layer_ctx& c, const value& x) {
  // Im2ColBackward keeps only sizes
  return pointwise(c.s, x, unfolded_shape(x.s, c.L.a[0], c.L.a[1], c.L.a[2]), x.type, keeps::nothing);
}

constexpr value lower_local_attention(layer_ctx& c, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 3) tensor_rank_unsupported();
  const auto C = x.s[0], H = x.s[1], W = x.s[2], heads = c.L.a[0], k = c.L.a[1];
  if (heads <= 0 || k <= 0) invalid_layer_argument();
  if (C % heads != 0) heads_do_not_divide_model_width();
  const auto HW = checked_mul(H, W);
  const shape chw = x.s;
  const dtype t = c.matmul_type(x.type);

  // qkv = Conv2d(C, 3C, 1, bias=False)
  value xin = cast_to(s, x, t);
  c.add_param(checked_mul(C, 3 * C));
  value qkv = with_params(c, xin, make_shape(3 * C, H, W), t, checked_mul(C, 3 * C), true, 0, 0, 0, checked_mul(C, 3 * C), 0);
  s.release(xin);
  value y{};
  if (static_cast<local_attention_impl>(c.L.a[2]) == local_attention_impl::unfold) {
    value q = s.view(qkv, chw), kk = s.view(qkv, chw), v = s.view(qkv, chw);
    const shape unf = make_shape(C * k * k, HW);
    value ku = pointwise(s, kk, unf, t, keeps::nothing);  // F.unfold(k, k, padding=k/2)
    value vu = pointwise(s, v, unf, t, keeps::nothing);
    s.release(kk);
    s.release(v);
    value prod = multiply(s, q, ku, unf);                 // q · k over every neighbour
    s.release(ku);
    value scores = pointwise(s, prod, make_shape(heads * k * k, HW), t, keeps::nothing);  // sum over channels
    s.release(prod);
    value cast_scores = cast_to(s, scores, c.fp32_op_type(t));
    s.release(scores);
    value att = pointwise(s, cast_scores, cast_scores.s, cast_scores.type, keeps::output);  // softmax over k²
    s.release(cast_scores);
    value weighted = multiply(s, att, vu, unf);
    s.release(att);
    s.release(vu);
    value summed = pointwise(s, weighted, chw, t, keeps::nothing);  // sum over the neighbours
    s.release(weighted);
    s.release(q);
    y = summed;
  } else {
    c.add_param(checked_mul(3 * C, k * k));
    value dw = with_params(c, qkv, make_shape(3 * C, H, W), t, checked_mul(3 * C, k * k), true, 0, 0, 0, checked_mul(3 * C, k * k), 1);
    value q = s.view(dw, chw), kk = s.view(dw, chw), v = s.view(dw, chw);
    value prod = multiply(s, q, kk, chw);
    value logit = pointwise(s, prod, make_shape(heads, H, W), t, keeps::nothing);  // sum per head
    s.release(prod);
    value scaled = pointwise(s, logit, logit.s, t, keeps::nothing);              // / sqrt(C/heads)
    s.release(logit);
    value gate = pointwise(s, scaled, scaled.s, t, keeps::output);               // sigmoid
    s.release(scaled);
    value gated = multiply(s, gate, v, chw);                                      // broadcast over channels
    s.release(gate);
    s.release(q);
    s.release(kk);
    s.release(v);
    s.release(dw);
    // GroupNorm(1, C)
    c.add_param(C);
    c.add_param(C);
    value gin = cast_to(s, gated, c.fp32_op_type(t));
    s.release(gated);
    y = with_params(c, gin, chw, gin.type, 2 * C, true, 0, 0, 0, 0, 2);
    if (auto n = s.record_of(y); n >= 0) { s.save_new(n, s.batch * 4); s.save_new(n, s.batch * 4); }
    s.release(gin);
  }
  s.release(qkv);
  // output Conv2d(C, C, 1) with bias
  value yin = cast_to(s, y, t);
  s.release(y);
  c.add_param(checked_mul(C, C));
  c.add_param(C);
  value out = with_params(c, yin, chw, t, checked_mul(C, C) + C, true, 0, 0, 0, checked_mul(C, C), 3);
  s.release(yin);
  value res = add(s, out, x);
  s.release(out);
  return res;
}

}  // namespace detail::rules
}  // namespace gpubudget
