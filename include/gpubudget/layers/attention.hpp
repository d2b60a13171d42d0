// gpubudget/layers/attention.hpp — multi-head attention (self and cross), materialized or flash.
//
// Arguments: a[0] width D, a[1] heads, a[2] key/value tokens (0 = self-attention),
// a[3] implementation, a[4] key/value heads (grouped-query; 0 = heads).
// Each implementation replays the exact op sequence of its PyTorch 1.13 source, because which
// copies autograd keeps (a transposed view reshaped for bmm is copied; a view keeps its whole
// base) decides the bytes.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

enum class attention_impl : std::int64_t {
  /// q = Linear(D, D), kv = Linear(D, 2D) split; scores = q @ kᵀ / √d materialized; softmax;
  /// @ v; output Linear (the GPT / ViT blocks of the reference measurements).
  split_qkv = 0,
  /// torch.nn.MultiheadAttention's training path (packed in_proj, q scaled before bmm).
  torch_mha = 1,
  /// Fused qkv Linear + scaled_dot_product_attention's flash kernel: no score matrix; keeps
  /// q, k, v, the output and a per-row fp32 log-sum-exp.
  flash = 2,
};

namespace detail {
constexpr void apply_attention_option(layer& l, kv_tokens t) { l.a[2] = t.value; }
constexpr void apply_attention_option(layer& l, attention_impl i) { l.a[3] = static_cast<std::int64_t>(i); }
constexpr void apply_attention_option(layer& l, kv_heads h) { l.a[4] = h.value; }
constexpr void apply_attention_option(layer& l, no_bias_t) { l.bias = false; }
}  // namespace detail

/// Multi-head attention over [tokens, width] with `heads` heads; options: kv_tokens(n) for
/// cross-attention over n key/value tokens, an attention_impl, kv_heads(n), no_bias.
template <class... Opts>
constexpr layer attention(std::int64_t width, heads h, Opts... opts) {
  layer l{};
  l.kind = op::attention;
  l.a[0] = width;
  l.a[1] = h.value;
  (detail::apply_attention_option(l, opts), ...);
  return l;
}

namespace detail::rules {

/// Bytes of one [B, heads, Lq, Lk] score matrix of type t: what the materialized path allocates.
constexpr std::int64_t score_matrix_bytes(std::int64_t batch, std::int64_t h, std::int64_t lq, std::int64_t lk, dtype t) {
  return bytes_of(checked_mul(checked_mul(checked_mul(batch, h), lq), lk), t);
}

constexpr value lower_attention(layer_ctx& c, const value& x) {
  auto& s = c.s;
  const auto D = c.L.a[0], H = c.L.a[1];
  if (D <= 0 || H <= 0) invalid_layer_argument();
  if (x.s.rank != 2 || x.s[1] != D) shape_mismatch_between_layers();
  if (D % H != 0) heads_do_not_divide_model_width();
  const auto KVH = c.L.a[4] > 0 ? c.L.a[4] : H;
  if (H % KVH != 0) heads_do_not_divide_model_width();
  const auto d = D / H;
  const auto Lq = x.s[0];
  const auto Lk = c.L.a[2] > 0 ? c.L.a[2] : Lq;
  const bool bias = c.L.bias;
  const auto impl = static_cast<attention_impl>(c.L.a[3]);
  const dtype mt = c.matmul_type(x.type);

  // Key/value source: the input itself, or (cross-attention) a [Lk, D] tensor built from it.
  value kv_src = x;
  s.retain(x.id);
  if (Lk != Lq) {
    s.release(kv_src);
    kv_src = s.make(make_shape(Lk, D), x.type, x.requires_grad);
    auto n = s.record(kv_src);
    s.grad_to(n, x);
  }

  value result{};
  if (impl == attention_impl::flash) {
    const auto kvw = 2 * KVH * d;
    value q = linear_op(c, x, D, bias, 0);
    value kv = linear_op(c, kv_src, kvw, bias, 1);
    // flash forward: output + logsumexp [B, H, Lq] fp32; keeps q, k, v (views: whole bases)
    value o = s.make(make_shape(Lq, D), mt, q.requires_grad || kv.requires_grad);
    auto n = s.record(o);
    s.save(n, q);
    s.save(n, kv);
    s.save(n, o);
    s.save_new(n, bytes_of(checked_mul(checked_mul(s.batch, H), Lq), dtype::fp32));
    s.grad_to(n, q);
    s.grad_to(n, kv);
    s.release(q);
    s.release(kv);
    value oc = copy(s, o, o.s);  // o.transpose(1, 2).contiguous()
    s.release(o);
    result = linear_op(c, oc, D, bias, 2);
    s.release(oc);
  } else if (impl == attention_impl::torch_mha) {
    // in_proj on the transposed input: matmul folds it with reshape, which copies
    value xf = copy(s, x, x.s);
    value proj = linear_op(c, xf, 3 * D, bias, 0);
    s.release(xf);
    value packed = copy(s, proj, proj.s);  // unflatten/transpose/contiguous
    s.release(proj);
    value q_view = s.view(packed, make_shape(Lq, D));  // proj[0], proj[1], proj[2]: views
    value k_view = s.view(packed, make_shape(Lk, D));
    value v_view = s.view(packed, make_shape(Lk, D));
    value q = pointwise(s, q_view, make_shape(Lq, D), packed.type, keeps::nothing);  // q / sqrt(d)
    value scores = bmm(s, q, k_view, make_shape(H * Lq, Lk), mt);
    s.release(q);
    value cast_scores = cast_to(s, scores, c.fp32_op_type(scores.type));
    s.release(scores);
    value p = pointwise(s, cast_scores, cast_scores.s, cast_scores.type, keeps::output);
    s.release(cast_scores);
    value p16 = cast_to(s, p, mt);
    s.release(p);
    value o = bmm(s, p16, v_view, make_shape(Lq, D), mt);
    s.release(p16);
    s.release(q_view);
    s.release(k_view);
    s.release(v_view);
    s.release(packed);
    value oc = copy(s, o, o.s);
    s.release(o);
    result = linear_op(c, oc, D, bias, 1);
    s.release(oc);
  } else {
    value q = linear_op(c, x, D, bias, 0);
    value kv = linear_op(c, kv_src, 2 * KVH * d, bias, 1);
    // q @ k.transpose(-2, -1): both transposed views are reshaped for bmm, i.e. copied
    value qc = copy(s, q, q.s);
    value kc = copy(s, kv, make_shape(Lk, KVH * d));
    value scores = bmm(s, qc, kc, make_shape(H * Lq, Lk), mt);
    s.release(qc);
    s.release(kc);
    value scaled = pointwise(s, scores, scores.s, scores.type, keeps::nothing);  // / sqrt(d)
    s.release(scores);
    value cast_scores = cast_to(s, scaled, c.fp32_op_type(scaled.type));
    s.release(scaled);
    value p = pointwise(s, cast_scores, cast_scores.s, cast_scores.type, keeps::output);
    s.release(cast_scores);
    value p16 = cast_to(s, p, mt);
    s.release(p);
    value vc = copy(s, kv, make_shape(Lk, KVH * d));
    value o = bmm(s, p16, vc, make_shape(Lq, D), mt);
    s.release(p16);
    s.release(vc);
    value oc = copy(s, o, o.s);  // transpose(1, 2).contiguous()
    s.release(o);
    result = linear_op(c, oc, D, bias, 2);
    s.release(oc);
    s.release(q);   // the function's locals q, k, v die when it returns
    s.release(kv);
  }
  s.release(kv_src);
  return result;
}

}  // namespace detail::rules
}  // namespace gpubudget
