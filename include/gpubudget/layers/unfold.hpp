// gpubudget/layers/unfold.hpp — im2col (F.unfold) and the local attention built on it, with its
// depthwise-separable replacement (the two layers of seed report 000).
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/conv.hpp>
#include <gpubudget/layers/norm.hpp>
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

/// F.unfold: keeps its input (a view keeps the whole base); on the CPU it pads a copy of the
/// input first and its backward (col2im) holds an output-sized temporary (op_rules.md §1).
constexpr value unfold_op(sim& s, const value& x, const shape& out) {
  const bool cpu = s.plan.backend == backend_kind::cpu;
  return pointwise(s, x, out, x.type, keeps::input, 0, cpu ? s.bytes_of_value(x) : 0, cpu ? s.bytes_of_value(out, x.type) : 0);
}

constexpr value lower_unfold(layer_ctx& c, const value& x) {
  return unfold_op(c.s, x, unfolded_shape(x.s, c.L.a[0], c.L.a[1], c.L.a[2]));
}

/// `t.chunk(3, dim=1)[i].reshape(...)`: a view when the batch is 1, a copy otherwise (a channel
/// slice of a batched tensor is not contiguous).
constexpr value chunk_reshape(sim& s, const value& base, const shape& sh) {
  value v = s.view(base, sh);
  if (s.batch == 1) return v;
  value c = copy(s, v, sh);
  s.release(v);
  return c;
}

/// The two local-attention layers of seed report 000 (benchmarks/accuracy/measure.py:
/// UnfoldLocalAttn, DWConvGate), op for op.
constexpr value lower_local_attention(layer_ctx& c, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 3) tensor_rank_unsupported();
  const auto C = x.s[0], H = x.s[1], W = x.s[2], heads = c.L.a[0], k = c.L.a[1];
  if (heads <= 0 || k <= 0) invalid_layer_argument();
  if (C % heads != 0) heads_do_not_divide_model_width();
  const auto HW = checked_mul(H, W), K = k * k, hd = C / heads;
  const shape chw = x.s;

  layer qkv_l = conv2d(3 * C, 1, no_bias);
  value qkv = conv_op(c, x, qkv_l, 0);  // Conv2d(C, 3C, 1, bias=False)
  value y{};
  if (static_cast<local_attention_impl>(c.L.a[2]) == local_attention_impl::unfold) {
    value q = chunk_reshape(s, qkv, make_shape(C, HW));
    value kk = s.view(qkv, chw), v = s.view(qkv, chw);
    const shape unf = make_shape(C * K, HW);
    value ku = unfold_op(s, kk, unf);  // F.unfold(k, k, padding=k//2) -> [B, C·k², H·W]
    s.release(kk);
    value vu = unfold_op(s, v, unf);
    s.release(v);
    value prod = broadcast_multiply(s, ku, q, unf);  // q · k for every neighbour
    value scores = reduce(s, prod, make_shape(heads * K, HW));  // .sum(dim=2) over head channels
    s.release(prod);
    value att = pointwise(s, scores, scores.s, scores.type, keeps::output);  // softmax over k²
    s.release(scores);
    value weighted = broadcast_multiply(s, vu, att, unf);
    y = reduce(s, weighted, make_shape(C, HW));  // .sum(dim=3) over the neighbours
    s.release(weighted);
    s.release(q);
    s.release(ku);
    s.release(vu);
    s.release(att);
  } else {
    layer dw_l = depthwise_conv2d(k, padding(k / 2), no_bias);
    value t = conv_op(c, qkv, dw_l, 1);  // depthwise k×k over the 3C channels
    value q = chunk_reshape(s, t, chw), kk = chunk_reshape(s, t, chw), v = chunk_reshape(s, t, chw);
    s.release(t);
    value prod = multiply(s, q, kk, chw);
    value summed = reduce(s, prod, make_shape(heads, H, W));  // .sum(dim=2, keepdim=True)
    s.release(prod);
    value scaled = pointwise(s, summed, summed.s, summed.type, keeps::nothing);  // / sqrt(C/heads)
    s.release(summed);
    value gate = pointwise(s, scaled, scaled.s, scaled.type, keeps::output);  // sigmoid
    s.release(scaled);
    value gated = broadcast_multiply(s, v, gate, chw);
    s.release(gate);
    s.release(q);
    s.release(kk);
    s.release(v);
    (void)hd;
    layer gn_l = group_norm(1);
    layer_ctx gn = c.sub(gn_l, 2);
    y = lower_group_norm(gn, gated);
    c.absorb(gn, 2);
    s.release(gated);
  }
  s.release(qkv);
  value yv = s.view(y, chw);
  s.release(y);
  layer proj_l = conv2d(C, 1);
  value out = conv_op(c, yv, proj_l, 3);  // Conv2d(C, C, 1)
  s.release(yv);
  value res = add(s, x, out);
  s.release(out);
  return res;
}

}  // namespace detail::rules
}  // namespace gpubudget
