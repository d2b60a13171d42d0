// gpubudget/layers/swin.hpp — Swin Transformer's (shifted) window attention with a learned
// relative-position bias table, and its patch merging (torchvision 0.14 swin_transformer.py).
//
// Both work on channels-last maps [H, W, C]. Each lowering replays the op sequence of
// torchvision's shifted_window_attention / PatchMerging, because which copies it makes decides
// the bytes. What PyTorch 1.13 keeps and allocates (op_rules.md §1, §0.2 and §7; zoo_op_probe.py):
//   F.pad — a new tensor even when every pad is 0, keeps nothing;  torch.roll — a new tensor,
//   keeps nothing, a further input-sized temporary in forward and in backward;  permute+reshape
//   of the window partition — a copy;  Linear — keeps its input;  q * scale — a new tensor,
//   keeps a 0-d scalar;  q @ kᵀ — k's transposed view is copied for bmm, both operands kept;
//   table[index] — keeps the int64 index buffer;  + bias / + mask — new tensors, keep nothing;
//   softmax — keeps its output;  attn @ v — v's strided view is copied, both kept;
//   transpose+reshape — a copy;  Dropout(p=0) — nothing;
//   strided slices + cat (patch merging) — the cat is new and keeps nothing, its backward
//   scatters every slice's gradient into an input-sized zero tensor (measured peak 3·X).
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/norm.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// torchvision ShiftedWindowAttention(C, [w, w], [shift, shift], heads) on [H, W, C]: qkv
/// Linear(C, 3C), proj Linear(C, C) (both with bias), a relative-position bias table of
/// (2w-1)²·heads parameters and its int64 index buffer of w⁴ entries. The shift is dropped (as
/// torchvision does) where the window covers the whole padded map.
/// `v2`: ShiftedWindowAttentionV2 (Swin V2): cosine attention with a learned logit scale (one a
/// head) and a continuous position bias, cpb_mlp = Linear(2, 512), ReLU, Linear(512, heads, no
/// bias) on a ((2w-1)², 2) coordinate buffer, in place of the table.
/// `window_t` > 0: torchvision's ShiftedWindowAttention3d (Video Swin) on [T, H, W, C], a
/// window_t × window × window window shifted by shift_t, shift, shift; where the input is no
/// larger than the window along a dimension, the window shrinks to it and does not shift there
/// (torchvision's _get_window_and_shift_size).
struct window_attention_op {
  std::int64_t heads = {};
  std::int64_t window = {};
  std::int64_t shift = {};
  flag v2 = false;
  std::int64_t window_t = {};
  std::int64_t shift_t = {};
};

/// torchvision PatchMerging(C): [H, W, C] -> [⌈H/2⌉, ⌈W/2⌉, 4C] (pad, four strided slices, cat)
/// -> LayerNorm(4C) -> Linear(4C, 2C, bias=False); `v2` (PatchMergingV2): the Linear first, then
/// LayerNorm(2C).
struct patch_merging_op {
  flag v2 = false;
};

namespace detail {

/// Relative-position bias table parameters of a w×w window with `h` heads.
constexpr std::int64_t relative_position_table(std::int64_t w, std::int64_t h) { return (2 * w - 1) * (2 * w - 1) * h; }
/// Swin V2's cpb_mlp width (torchvision's ShiftedWindowAttentionV2: Linear(2, 512)).
inline constexpr std::int64_t cpb_hidden = 512;
/// Swin V2's position-bias parameters: the logit scale (one a head) and cpb_mlp's two Linears.
constexpr std::int64_t continuous_position_parameters(std::int64_t h) { return h + (2 * cpb_hidden + cpb_hidden) + cpb_hidden * h; }

/// Sizes of one shifted-window attention call (a 2-D one: T = pT = wt = 1, wh = ww = w).
struct window_dims {
  std::int64_t H = 0, W = 0, C = 0, heads = 0, w = 0, pH = 0, pW = 0, nW = 0, N = 0, d = 0;
  bool shifted = false;
  dtype mt = dtype::fp32;
  std::int64_t T = 1, pT = 1, wt = 1, wh = 0, ww = 0;
  std::int64_t full_N = 0;  ///< the window's tokens before any shrinking (the index buffer's side)
  constexpr bool three_d() const { return wh > 0; }
  /// The padded map [pT, pH, pW, C] (2-D: [pH, pW, C]) and the map itself.
  constexpr shape padded_map() const { return three_d() ? make_shape(pT, pH, pW, C) : make_shape(pH, pW, C); }
  constexpr shape map() const { return three_d() ? make_shape(T, H, W, C) : make_shape(H, W, C); }
};

constexpr std::int64_t padded_to(std::int64_t n, std::int64_t w) { return n + (w - n % w) % w; }

constexpr window_dims check_window(const layer_ctx& c, const window_attention_op& op, const value& x) {
  const bool three = op.window_t > 0;
  if (x.s.rank != (three ? 4 : 3) || (three && op.v2)) tensor_rank_unsupported();
  const int r = x.s.rank;
  const auto H = x.s[r - 3], W = x.s[r - 2], C = x.s[r - 1], heads = op.heads, w = op.window;
  if (heads <= 0) heads_must_be_positive();
  if (w <= 0 || op.window_t < 0) window_size_must_be_positive();
  if (op.shift < 0 || op.shift_t < 0) invalid_layer_argument();
  if (C % heads != 0) heads_do_not_divide_model_width();
  if (!three) {
    const auto pH = padded_to(H, w), pW = padded_to(W, w);
    return {H, W, C, heads, w, pH, pW, (pH / w) * (pW / w), w * w, C / heads, op.shift > 0 && (w < pH || w < pW), c.matmul_type(x.type),
            1, 1, 1, 0, 0, w * w};
  }
  // a window no smaller than the input along a dimension shrinks to it, unshifted there
  const auto T = x.s[0];
  const auto wt = T <= op.window_t ? T : op.window_t, wh = H <= w ? H : w, ww = W <= w ? W : w;
  const bool shifted = (T > op.window_t && op.shift_t > 0) || ((H > w || W > w) && op.shift > 0);
  const auto pT = padded_to(T, wt), pH = padded_to(H, wh), pW = padded_to(W, ww);
  return {H, W, C, heads, w, pH, pW, (pT / wt) * (pH / wh) * (pW / ww), wt * wh * ww, C / heads, shifted, c.matmul_type(x.type),
          T, pT, wt, wh, ww, op.window_t * w * w};
}

/// Swin V2's cpb_mlp hidden layer [(2w-1)², 512] fp32.
constexpr std::int64_t cpb_hidden_bytes(const window_dims& a) { return bytes_of((2 * a.w - 1) * (2 * a.w - 1) * cpb_hidden, dtype::fp32); }

/// torch.roll(x, (±shift, ±shift)): a new tensor, nothing kept, an input-sized temporary in
/// forward and in backward. Consumes `x`.
constexpr value roll(sim& s, const value& x) {
  value r = pointwise(s, x, x.s, x.type, keeps::nothing, 0, s.bytes_of_value(x), s.bytes_of_value(x));
  s.release(x);
  return r;
}

/// attn + relative_position_bias (and + the shift mask): a new tensor (fp32 under autocast: the
/// table is fp32); the table's gradient is the batch-sum of the incoming gradient, scattered back
/// by index. `mask` receives the shift mask (alive until the attention returns). Consumes `scores`.
constexpr value add_position_bias(layer_ctx& c, const window_dims& a, const value& scores, std::int64_t table, std::int64_t bias_bytes,
                                  dtype x_type, value& mask, bool v2, const value& hidden = {}, const value& sigmoid = {}) {
  auto& s = c.s;
  value attn = s.make(scores.s, c.param_type() == dtype::fp32 ? dtype::fp32 : scores.type, scores.requires_grad || c.trainable);
  if (auto n = s.record(attn); n >= 0) {
    // IndexBackward keeps the int64 index: a resident buffer, counted as saved like BatchNorm's
    // running statistics, allocating nothing
    if (a.N == a.full_N) s.save_resident(n, bytes_of(a.N * a.N, dtype::int64), 1, !c.first_use);  // one buffer, however often the module runs
    else s.save_new(n, bytes_of(a.N * a.N, dtype::int64), 1, true);  // a shrunk window's index[:N, :N].flatten(): a copy
    s.save(n, hidden), s.save(n, sigmoid);  // V2: what cpb_mlp's nodes keep, freed when its backward ran
    if (v2) s.save_resident(n, bytes_of(2 * (2 * a.w - 1) * (2 * a.w - 1), dtype::fp32), 1, !c.first_use);  // its first Linear's input, relative_coords_table
    s.grad_to(n, scores, true);
    c.param_grads(n, table, v2 ? 3 : 2);
    // V2: cpb_mlp's backward, after the attention's: the hidden layer's gradient twice (Linear, ReLU)
    if (c.trainable) s.backward_temp(n, 2 * bias_bytes + (v2 ? 2 * cpb_hidden_bytes(a) : 0), true);
  }
  s.release(scores);
  if (!a.shifted) return attn;
  // the attention mask [nW, N, N] in x's type, the same for every sample, alive until the
  // return; attn.view(B, nW, ...) + mask: a new tensor
  const auto mask_bytes = bytes_of(a.nW * a.N * a.N, x_type);
  mask = s.make_batch_free(mask_bytes, {}, x_type, false);
  s.transient(mask_bytes, true);  // attn_mask.unsqueeze(1) - attn_mask.unsqueeze(2) before masked_fill
  value masked = pointwise(s, attn, attn.s, attn.type == dtype::fp32 || x_type == dtype::fp32 ? dtype::fp32 : attn.type, keeps::nothing);
  s.release(attn);
  return masked;
}

/// Swin V1's scores: (q · d^-0.5) @ kᵀ, q's product new (it keeps the 0-d fp64 scalar, 8 B,
/// op_rules.md §1; nothing in 2.6), kᵀ made contiguous for bmm; bmm keeps both.
constexpr value scaled_scores(sim& s, const window_dims& a, const value& qkv) {
  value q = pointwise(s, qkv, make_shape(a.nW, a.heads, a.N, a.d), qkv.type, keeps::nothing, scalar_operand_saved(s));
  value kc = copy(s, qkv, make_shape(a.nW, a.heads, a.d, a.N));
  value scores = bmm(s, q, kc, make_shape(a.nW, a.heads, a.N, a.N), a.mt, {a.N, a.N, a.d});
  s.release(q), s.release(kc);
  return scores;
}

/// F.normalize(t, dim=-1) of q or k, a strided view of qkv: t / t.norm(dim=-1, keepdim=True)
/// .clamp_min(eps). The norm keeps t (qkv's storage) and its [.., 1] result, clamp_min that
/// result, the division t and the clamped norm; the quotient is new and contiguous.
constexpr value normalized(sim& s, const window_dims& a, const value& qkv) {
  const auto rows = make_shape(a.nW, a.heads, a.N, 1);
  value norm = pointwise(s, qkv, rows, qkv.type, keeps::output);
  s.save(s.record_of(norm), qkv);
  value clamped = pointwise(s, norm, rows, qkv.type, keeps::input);
  s.release(norm);
  value t = s.make(make_shape(a.nW, a.heads, a.N, a.d), qkv.type, qkv.requires_grad);
  const auto n = s.record(t);
  s.save(n, qkv), s.save(n, clamped);
  s.grad_to(n, qkv), s.grad_to(n, clamped);
  s.release(clamped);
  return t;
}

/// Swin V2's cosine scores: normalize(q) @ normalize(k)ᵀ, times the clamped exp of the logit scale
/// [heads, 1, 1]. The quotients keep qkv's strided layout, so matmul copies both for bmm (which
/// keeps the copies), the quotients alive until it returns; MulBackward0 keeps the scores and the
/// scale (op_rules.md 2.6 #72).
constexpr value cosine_scores(layer_ctx& c, const window_dims& a, const value& qkv) {
  auto& s = c.s;
  value q = normalized(s, a, qkv), k = normalized(s, a, qkv);
  value qc = copy(s, q, q.s), kc = copy(s, k, make_shape(a.nW, a.heads, a.d, a.N));
  value scores = bmm(s, qc, kc, make_shape(a.nW, a.heads, a.N, a.N), a.mt, {a.N, a.N, a.d});
  s.release(q), s.release(k), s.release(qc), s.release(kc);
  value scaled = pointwise(s, scores, scores.s, scores.type, keeps::input);
  const auto n = s.record_of(scaled);
  s.save_new(n, bytes_of(a.heads, dtype::fp32), 1, true);  // exp(clamp(logit_scale)), [heads, 1, 1]
  c.param_grads(n, a.heads, 2);
  s.release(scores);
  return scaled;
}

/// Window attention on the partitioned windows `xw` ([nW, N, C], consumed): qkv, scores with
/// the position bias (and shift mask), softmax, @ v, proj. Returns [nW, N, C]; `qkv` and `mask`
/// receive what stays alive until torchvision's function returns.
constexpr value attend_windows(layer_ctx& c, const window_dims& a, const value& xw, std::int64_t table, std::int64_t bias_bytes,
                               dtype x_type, value& qkv, value& mask, bool v2, const value& hidden, const value& sigmoid) {
  auto& s = c.s;
  qkv = linear_op(c, xw, 3 * a.C, true, 0);  // keeps xw
  s.release(xw);
  // q, k, v: strided views of qkv (alive until the function returns)
  value scores = v2 ? cosine_scores(c, a, qkv) : scaled_scores(s, a, qkv);
  value attn = add_position_bias(c, a, scores, table, bias_bytes, x_type, mask, v2, hidden, sigmoid);
  value p16 = softmax_for_matmul(s, attn, a.mt);
  s.release(attn);
  value vc = copy(s, qkv, make_shape(a.nW, a.heads, a.N, a.d));  // v's strided view copied for bmm
  value o = bmm(s, p16, vc, make_shape(a.nW, a.heads, a.N, a.d), a.mt, {a.N, a.d, a.N});
  s.release(p16), s.release(vc);
  value oc = copy(s, o, make_shape(a.nW, a.N, a.C));  // transpose(1, 2).reshape
  s.release(o);
  value proj = linear_op(c, oc, a.C, true, 1);
  s.release(oc);
  return proj;
}

/// Swin V2's get_relative_position_bias(), before the attention: cpb_mlp on the coordinate
/// buffer (ReLU in place: the hidden layer, kept by it and the second Linear), its [(2w-1)², heads]
/// output gathered by the index and copied contiguous [heads, N, N], then 16·sigmoid (sigmoid keeps
/// its output). `kept` receives the hidden layer and the sigmoid (saved by the bias add's node, whose
/// gradient reaches cpb_mlp); returns the bias, alive until the attention returns.
constexpr value continuous_position_bias(sim& s, const window_dims& a, std::int64_t bias_bytes, value& hidden, value& sigmoid) {
  const auto hidden_bytes = cpb_hidden_bytes(a), table_bytes = bytes_of((2 * a.w - 1) * (2 * a.w - 1) * a.heads, dtype::fp32);
  hidden = s.make_batch_free(hidden_bytes, {}, dtype::fp32, false);
  s.transient(table_bytes + 2 * bias_bytes, true);  // the Linear's output, the gather and its contiguous copy
  sigmoid = s.make_batch_free(bias_bytes, {}, dtype::fp32, false);
  return s.make_batch_free(bias_bytes, {}, dtype::fp32, false);
}

constexpr value window_attention(layer_ctx& c, const window_attention_op& op, const value& x) {
  auto& s = c.s;
  const auto a = check_window(c, op, x);
  // parameters: table (part 2; V2: the logit scale, part 2, and cpb_mlp, part 3), qkv (part 0) and
  // proj (part 1) are registered by linear_op
  const auto table = op.v2 ? continuous_position_parameters(a.heads)
                            : relative_position_table(a.w, a.heads) * (a.three_d() ? 2 * op.window_t - 1 : 1);
  c.add_param(table);
  const auto cells = (2 * a.w - 1) * (2 * a.w - 1);
  // relative_position_index (the whole window's); V2 also relative_coords_table
  if (c.first_use) c.buffer_bytes += bytes_of(a.full_N * a.full_N, dtype::int64) + (op.v2 ? bytes_of(2 * cells, dtype::fp32) : 0);
  // get_relative_position_bias(): table[index] -> view -> permute -> .contiguous(): [heads, N, N]
  // fp32, the same for every sample; the gather's output dies at the copy, the copy lives until
  // the attention returns
  const auto bias_bytes = bytes_of(a.N * a.N * a.heads, dtype::fp32);
  value hidden{}, sigmoid{};
  value bias_copy = op.v2 ? continuous_position_bias(s, a, bias_bytes, hidden, sigmoid)
                          : s.make_batch_free(bias_bytes, {}, dtype::fp32, false);
  if (!op.v2) s.transient(bias_bytes, true);
  value xp = pointwise(s, x, a.padded_map(), x.type, keeps::nothing);  // F.pad: a copy
  if (a.shifted) xp = roll(s, xp);
  value xw = copy(s, xp, make_shape(a.nW, a.N, a.C));  // window partition: permute + reshape copies
  s.release(xp);
  value qkv{}, mask{};
  value proj = attend_windows(c, a, xw, op.v2 ? table - a.heads : table, bias_bytes, x.type, qkv, mask, op.v2, hidden, sigmoid);
  value y = copy(s, proj, a.padded_map());  // reverse windows: permute + reshape copies
  s.release(proj);
  if (a.shifted) y = roll(s, y);
  if (a.pT != a.T || a.pH != a.H || a.pW != a.W) {  // x[:, :H, :W].contiguous() copies only when padded
    value u = copy(s, y, a.map());
    s.release(y);
    y = u;
  }
  s.release(qkv), s.release(mask), s.release(bias_copy);  // q, k, v and the mask go out of scope
  s.release(hidden), s.release(sigmoid);
  return y;
}

constexpr value patch_merging(layer_ctx& c, const value& x, bool v2) {
  auto& s = c.s;
  // [H, W, C], or Video Swin's [T, H, W, C] (the frames pass through: x[..., 0::2, 0::2, :])
  if (x.s.rank != 3 && x.s.rank != 4) tensor_rank_unsupported();
  const int r = x.s.rank;
  const auto H = x.s[r - 3], W = x.s[r - 2], C = x.s[r - 1];
  const auto framed = [&](std::int64_t h, std::int64_t w, std::int64_t ch) { return r == 4 ? make_shape(x.s[0], h, w, ch) : make_shape(h, w, ch); };
  value xp = pointwise(s, x, framed(H + H % 2, W + W % 2, C), x.type, keeps::nothing);  // F.pad: a copy
  // torch.cat of four strided slices: a new tensor; backward: slice_backward builds an
  // input-sized zero tensor per slice, summed pairwise (measured 3·X)
  value cat = pointwise(s, xp, framed((H + 1) / 2, (W + 1) / 2, 4 * C), x.type, keeps::nothing, 0, 0, 2 * s.bytes_of_value(xp));
  s.release(xp);
  if (v2) {  // PatchMergingV2: the reduction, then its norm
    value r = linear_op(c, cat, 2 * C, false, 1);
    s.release(cat);
    layer_ctx lc = c.sub(0);
    value y = op_traits<layer_norm_op>::lower(lc, {}, r);
    c.absorb(lc, 0);
    s.release(r);
    return y;
  }
  layer_ctx lc = c.sub(0);
  value n = op_traits<layer_norm_op>::lower(lc, {}, cat);
  c.absorb(lc, 0);
  s.release(cat);
  value y = linear_op(c, n, 2 * C, false, 1);  // reduction: Linear(4C, 2C, bias=False)
  s.release(n);
  return y;
}

}  // namespace detail

template <>
struct op_traits<window_attention_op> {
  static constexpr const char* name = "window_attention";
  static constexpr detail::value lower(detail::layer_ctx& c, const window_attention_op& op, const detail::value& x) {
    return detail::window_attention(c, op, x);
  }
};

template <>
struct op_traits<patch_merging_op> {
  static constexpr const char* name = "patch_merging";
  static constexpr detail::value lower(detail::layer_ctx& c, const patch_merging_op& op, const detail::value& x) {
    return detail::patch_merging(c, x, op.v2);
  }
};

constexpr layer window_attention(heads h, std::int64_t window, std::int64_t shift = 0) {
  return as_layer(window_attention_op{h.value, window, shift});
}
/// torchvision's ShiftedWindowAttention3d (Video Swin) on [T, H, W, C]: window_attention_3d(heads(3),
/// 8, 7, 4, 3) is a (8, 7, 7) window shifted by (4, 3, 3); a (2·8−1)(2·7−1)²·heads bias table.
constexpr layer window_attention_3d(heads h, std::int64_t window_t, std::int64_t window, std::int64_t shift_t = 0, std::int64_t shift = 0) {
  if (window_t <= 0) detail::window_size_must_be_positive();
  return as_layer(window_attention_op{h.value, window, shift, false, window_t, shift_t});
}
/// torchvision's ShiftedWindowAttentionV2 (Swin V2): cosine attention, the continuous position bias.
constexpr layer window_attention_v2(heads h, std::int64_t window, std::int64_t shift = 0) {
  return as_layer(window_attention_op{h.value, window, shift, true});
}
constexpr layer patch_merging() { return as_layer(patch_merging_op{}); }
/// torchvision's PatchMergingV2: Linear(4C, 2C, bias=False), then LayerNorm(2C).
constexpr layer patch_merging_v2() { return as_layer(patch_merging_op{true}); }
}  // namespace gpubudget
