// gpubudget/layers/attention.hpp — multi-head attention (self and cross), materialized or flash.
//
// Grouped-query attention: q and the output projection are D×D, k and v D×(kv_heads·D/heads).
// Each implementation replays the exact op sequence of its PyTorch 1.13 source, because which
// copies autograd keeps (a transposed view reshaped for bmm is copied; a view keeps its whole
// base) decides the bytes.
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>
#include <gpubudget/layers/rotary.hpp>

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

/// Multi-head attention of `heads` heads over [tokens, width]: self-attention (kv_tokens 0) or
/// cross-attention over kv_tokens, grouped-query with kv_heads (0 = heads), RoPE with rotary.
struct attention_op {
  std::int64_t width = {};
  std::int64_t heads = {};
  std::int64_t kv_tokens = {};
  attention_impl impl = {};
  std::int64_t kv_heads = {};
  flag bias = {};
  flag rotary = {};
};

/// Bytes of one [B, heads, Lq, Lk] score matrix of type t: what the materialized path allocates.
constexpr std::int64_t score_matrix_bytes(std::int64_t batch, std::int64_t h, std::int64_t lq, std::int64_t lk, dtype t) {
  return bytes_of(checked_mul(checked_mul(checked_mul(batch, h), lq), lk), t);
}

namespace detail {


/// The flash kernel (scaled_dot_product_attention): a new [Lq, D] output and a per-row fp32
/// log-sum-exp [B, H, Lq]; keeps its inputs (views keep their bases), the output and the
/// log-sum-exp; no score matrix. Consumes the inputs.
template <std::size_t K>
constexpr value flash_kernel(sim& s, const value (&inputs)[K], const shape& out, dtype t, std::int64_t heads) {
  bool rg = false;
  for (const auto& v : inputs) rg = rg || v.requires_grad;
  value o = s.make(out, t, rg);
  auto n = s.record(o);
  for (const auto& v : inputs) s.save(n, v);
  s.save(n, o);
  s.save_new(n, bytes_of(checked_mul(checked_mul(s.batch, heads), out[0]), dtype::fp32));
  for (const auto& v : inputs) s.grad_to(n, v);
  for (const auto& v : inputs) s.release(v);
  return o;
}

/// o (the [Lq, D] attention output, heads interleaved) -> transpose(..).contiguous() (a copy)
/// -> the output Linear. Consumes `o`.
constexpr value output_projection(layer_ctx& c, const value& o, std::int64_t D, bool bias, std::int32_t part) {
  value oc = copy(c.s, o, o.s);
  c.s.release(o);
  value result = linear_op(c, oc, D, bias, part);
  c.s.release(oc);
  return result;
}

/// Attention of queries `x` ([Lq, D]) over keys/values computed from `kv_src` ([Lk, D]; the
/// same value as `x` for self-attention), with the settings of `op`.
constexpr value multi_head_attention(layer_ctx& c, const attention_op& op, const value& x, const value& kv_src) {
  auto& s = c.s;
  const auto D = op.width, H = op.heads;
  if (D <= 0 || H <= 0) invalid_layer_argument();
  if (x.s.rank != 2 || x.s[1] != D || kv_src.s.rank != 2 || kv_src.s[1] != D) shape_mismatch_between_layers();
  if (D % H != 0) heads_do_not_divide_model_width();
  if (op.kv_heads < 0 || op.kv_tokens < 0) invalid_layer_argument();
  const auto KVH = op.kv_heads > 0 ? op.kv_heads : H;
  if (H % KVH != 0) heads_do_not_divide_model_width();
  const auto d = D / H;
  const auto Lq = x.s[0];
  const auto Lk = kv_src.s[0];
  const bool bias = op.bias;
  const auto impl = op.impl;
  const dtype mt = c.matmul_type(x.type);

  if (op.rotary && impl != attention_impl::flash) invalid_layer_argument();  // rotary: flash only
  if (impl == attention_impl::flash && op.rotary) {
    // transformers' LlamaAttention: q, k, v projections; RoPE on q and k; a flash kernel with
    // native grouped-query support (flash-attn 2, or SDPA with enable_gqa) keeps q, k, v at
    // their own head counts, the output and a per-row fp32 log-sum-exp
    value q = linear_op(c, x, D, bias, 0);
    value k = linear_op(c, kv_src, KVH * d, bias, 1);
    value v = linear_op(c, kv_src, KVH * d, bias, 3);
    value cs = rotary_table(s, Lq, d, q.type), sn = rotary_table(s, Lq, d, q.type);
    value qr = rotary_op(s, q, cs, sn);
    s.release(q);
    if (Lk != Lq) { s.release(cs); s.release(sn); cs = rotary_table(s, Lk, d, k.type); sn = rotary_table(s, Lk, d, k.type); }
    value kr = rotary_op(s, k, cs, sn);
    s.release(k);
    s.release(cs);
    s.release(sn);
    const value qkv[] = {qr, kr, v};
    return output_projection(c, flash_kernel(s, qkv, make_shape(Lq, D), mt, H), D, bias, 2);
  }
  if (impl == attention_impl::flash) {
    value q = linear_op(c, x, D, bias, 0);
    value kv = linear_op(c, kv_src, 2 * KVH * d, bias, 1);
    const value qkv[] = {q, kv};  // k and v: views of one projection
    return output_projection(c, flash_kernel(s, qkv, make_shape(Lq, D), mt, H), D, bias, 2);
  }
  if (impl == attention_impl::torch_mha) {
    // PyTorch 1.13 F.multi_head_attention_forward (training path, batch_first): in_proj on the
    // transposed input (matmul folds it with reshape, which copies); q, k, v = proj.chunk(3):
    // views, each made contiguous (copies); q / sqrt(d); bmm; softmax; bmm; out_proj.
    value xf = copy(s, x, x.s);
    value proj = linear_op(c, xf, 3 * D, bias, 0);
    s.release(xf);
    value qv = s.view(proj, make_shape(Lq, D)), kv_ = s.view(proj, make_shape(Lk, D)), vv = s.view(proj, make_shape(Lk, D));
    s.release(proj);
    value qc = copy(s, qv, qv.s), kc = copy(s, kv_, kv_.s), vc = copy(s, vv, vv.s);
    s.release(qv);
    s.release(kv_);
    s.release(vv);
    value q = pointwise(s, qc, qc.s, qc.type, keeps::nothing);  // q / sqrt(d)
    s.release(qc);
    value scores = bmm(s, q, kc, make_shape(H * Lq, Lk), mt);
    s.release(q);
    s.release(kc);
    value p16 = softmax_for_matmul(s, scores, mt);
    s.release(scores);
    value o = bmm(s, p16, vc, make_shape(Lq, D), mt);
    s.release(p16);
    s.release(vc);
    return output_projection(c, o, D, bias, 1);
  }
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
  value p16 = softmax_for_matmul(s, scaled, mt);
  s.release(scaled);
  value vc = copy(s, kv, make_shape(Lk, KVH * d));
  value o = bmm(s, p16, vc, make_shape(Lq, D), mt);
  s.release(p16);
  s.release(vc);
  value result = output_projection(c, o, D, bias, 2);
  s.release(q);  // the function's locals q, k, v die when it returns
  s.release(kv);
  return result;
}

}  // namespace detail

template <>
struct op_traits<attention_op> {
  static constexpr const char* name = "attention";
  static constexpr detail::value lower(detail::layer_ctx& c, const attention_op& op, const detail::value& x) {
    const auto Lk = op.kv_tokens > 0 ? op.kv_tokens : x.s[0];
    if (Lk == x.s[0]) return detail::multi_head_attention(c, op, x, x);
    // Cross-attention over Lk tokens that come from elsewhere: budget their [Lk, D] tensor as a
    // new activation derived from the input (its producer's own cost is not part of this layer).
    if (x.s.rank != 2) detail::shape_mismatch_between_layers();
    detail::value kv_src = c.s.make(make_shape(Lk, x.s[1]), x.type, x.requires_grad);
    auto n = c.s.record(kv_src);
    c.s.grad_to(n, x);
    detail::value y = detail::multi_head_attention(c, op, x, kv_src);
    c.s.release(kv_src);
    return y;
  }
  /// Projections (q, output; k and v at their head count), the score and value products.
  static constexpr std::int64_t flops(const attention_op& op, const shape& in, const shape&) {
    const auto D = op.width, H = op.heads > 0 ? op.heads : 1, Lq = in[0], Lk = op.kv_tokens > 0 ? op.kv_tokens : in[0];
    const auto kvw = 2 * (op.kv_heads > 0 ? op.kv_heads * (D / H) : D);
    return 2 * Lq * D * D * 2 + 2 * Lk * D * kvw + 2 * 2 * Lq * Lk * D;
  }
};

namespace detail {
constexpr void apply_attention_option(attention_op& o, kv_tokens t) { o.kv_tokens = t.value; }
constexpr void apply_attention_option(attention_op& o, attention_impl i) { o.impl = i; }
constexpr void apply_attention_option(attention_op& o, kv_heads h) { o.kv_heads = h.value; }
constexpr void apply_attention_option(attention_op& o, no_bias_t) { o.bias = false; }
constexpr void apply_attention_option(attention_op& o, rotary_t) { o.rotary = true; }
}  // namespace detail

/// Multi-head attention over [tokens, width] with `heads` heads; options: kv_tokens(n) for
/// cross-attention over n key/value tokens, an attention_impl, kv_heads(n), no_bias, rotary
/// (flash only: RoPE on q and k, separate k and v projections; see rotary.hpp).
template <class... Opts>
constexpr layer attention(std::int64_t width, heads h, Opts... opts) {
  attention_op o{width, h.value, 0, attention_impl::split_qkv, 0, true, false};
  (detail::apply_attention_option(o, opts), ...);
  return as_layer(o);
}

}  // namespace gpubudget
