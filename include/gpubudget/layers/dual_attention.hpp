// gpubudget/layers/dual_attention.hpp — the dual cross-attention ViT of seed report 001: one
// ViT's weights shared by three paths (self-attention on the target image, on the paired image,
// and pair-wise cross-attention whose keys/values are the concatenation of both).
//
// A single record, because its three paths trade tensors between them at every block; its
// lowering replays benchmarks/accuracy/measure.py's DualViT op for op.
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/attention.hpp>
#include <gpubudget/layers/dense.hpp>
#include <gpubudget/layers/norm.hpp>
#include <gpubudget/layers/vision.hpp>

namespace gpubudget {

/// Input [2, C, H, W] (an image pair); output [2·classes] (target and PWCA heads). Blocks are
/// pre-norm (q and kv projections, materialized attention, GELU MLP of `mlp`).
struct dual_cross_vit_op {
  std::int64_t patch = {};
  std::int64_t depth = {};
  std::int64_t width = {};
  std::int64_t heads = {};
  std::int64_t mlp = {};
  std::int64_t classes = {};
};

namespace detail {

struct vit_block_parts {
  attention_op attn{};
  std::int64_t mlp = 0, width = 0;
};

/// Parameter keys a block uses inside the layer: ln1, attention (3), ln2, fc, fc2.
inline constexpr std::int32_t dual_vit_block_parts = 7;

/// x + attn(LN(x), LN(kv or x)), then + MLP; `counts`: this application owns the parameters.
constexpr value dual_vit_block(layer_ctx& c, const vit_block_parts& b, std::int32_t base, const value& x, const value* kv_other,
                               bool counts) {
  auto& s = c.s;
  layer_ctx ln1 = c.sub(base, counts);
  value a = op_traits<layer_norm_op>::lower(ln1, {}, x);
  value kvin = a;
  if (kv_other) {
    // LN(cat([x, other], dim=1)): the same LayerNorm on 2T tokens
    value cat = s.make(make_shape(x.s[0] + kv_other->s[0], x.s[1]), x.type, x.requires_grad || kv_other->requires_grad);
    auto n = s.record(cat);
    s.grad_to(n, x, true);
    s.grad_to(n, *kv_other, true);
    layer_ctx ln1b = c.sub(base, false);
    kvin = op_traits<layer_norm_op>::lower(ln1b, {}, cat);
    s.release(cat);
    c.absorb(ln1b, base);
  } else {
    s.retain(kvin.id);
  }
  layer_ctx at = c.sub(base + 1, counts);
  value att = multi_head_attention(at, b.attn, a, kvin);
  s.release(a);
  s.release(kvin);
  value h = add(s, x, att);
  s.release(att);
  layer_ctx ln2 = c.sub(base + 4, counts);
  value m = op_traits<layer_norm_op>::lower(ln2, {}, h);
  layer_ctx fc1 = c.sub(0, counts);
  value f1 = linear_op(fc1, m, b.mlp, true, base + 5);
  s.release(m);
  value g = keep_input_activation(s, f1);  // GELU
  s.release(f1);
  layer_ctx fc2 = c.sub(0, counts);
  value f2 = linear_op(fc2, g, b.width, true, base + 6);
  s.release(g);
  value out = add(s, h, f2);
  s.release(h);
  s.release(f2);
  c.absorb(ln1, base);
  c.absorb(at, base + 1);
  c.absorb(ln2, base + 4);
  c.absorb(fc1, 0);
  c.absorb(fc2, 0);
  return out;
}

/// head(norm(x[:, 0])) and head(norm(p[:, 0])), concatenated: the two heads of seed 001's dual
/// ViT on the target path `tx` and the PWCA path `tp` (consumed); the norm's parameters are part
/// `tail` of the record, the head's part `tail + 1`; each counted once, on the target path.
constexpr value dual_vit_heads(layer_ctx& c, const value& tx, const value& tp, std::int32_t tail, std::int64_t D, std::int64_t K) {
  auto& s = c.s;
  value outs[2]{};
  const value* paths[2] = {&tx, &tp};
  for (int k = 0; k < 2; ++k) {
    value cls = s.view(*paths[k], make_shape(D));
    layer_ctx nc = c.sub(tail, k == 0);
    value n = op_traits<layer_norm_op>::lower(nc, {}, cls);
    s.release(cls);
    layer_ctx hc = c.sub(0, k == 0);
    outs[k] = linear_op(hc, n, K, true, tail + 1);
    s.release(n);
    c.absorb(nc, tail);
    c.absorb(hc, 0);
  }
  s.release(tx);
  s.release(tp);
  value out = s.make(make_shape(2 * K), outs[0].type, outs[0].requires_grad || outs[1].requires_grad);
  auto n = s.record(out);
  s.grad_to(n, outs[0], true);
  s.grad_to(n, outs[1], true);
  s.release(outs[0]);
  s.release(outs[1]);
  return out;
}

constexpr value dual_cross_vit(layer_ctx& c, const dual_cross_vit_op& op, const value& x) {
  auto& s = c.s;
  const auto P = op.patch, L = op.depth, D = op.width, H = op.heads, M = op.mlp, K = op.classes;
  if (x.s.rank != 4 || x.s[0] != 2) shape_mismatch_between_layers();
  if (P <= 0 || L <= 0 || M <= 0 || K <= 0) invalid_layer_argument();
  const shape img = make_shape(x.s[1], x.s[2], x.s[3]);
  // embed(pair[:, 0]) and embed(pair[:, 1]): one patch embedding (parts 0..2), applied twice
  const patch_embedding_op pe{D, P, true};
  value img0 = s.view(x, img), img1 = s.view(x, img);
  layer_ctx e0 = c.sub(0);
  value tx = op_traits<patch_embedding_op>::lower(e0, pe, img0);
  c.absorb(e0, 0);
  layer_ctx e1 = c.sub(0, false);
  value ty = op_traits<patch_embedding_op>::lower(e1, pe, img1);
  s.release(img0);
  s.release(img1);
  value tp = tx;
  s.retain(tp.id);  // p = x
  vit_block_parts b{};
  b.attn = attention_op{D, H, 0, attention_impl::split_qkv, 0, true, token_positions::plain, 0, 0, qkv_bias_kind::as_output};
  b.mlp = M;
  b.width = D;
  std::int32_t last_pair_update = 0;  // the first node of the last block's y = b(y), which feeds nothing
  for (std::int64_t l = 0; l < L; ++l) {
    const auto base = static_cast<std::int32_t>(3 + dual_vit_block_parts * l);
    value np = dual_vit_block(c, b, base, tp, &ty, true);  // p = b.cross(p, y)
    s.release(tp);
    tp = np;
    value nx = dual_vit_block(c, b, base, tx, nullptr, false);  // x = b(x)
    s.release(tx);
    tx = nx;
    last_pair_update = static_cast<std::int32_t>(s.autograd_nodes.size_);
    value ny = dual_vit_block(c, b, base, ty, nullptr, false);  // y = b(y)
    s.release(ty);
    ty = ny;
  }
  s.release(ty);
  s.drop_dead_graph(last_pair_update);
  const auto tail = static_cast<std::int32_t>(3 + dual_vit_block_parts * L);
  return dual_vit_heads(c, tx, tp, tail, D, K);
}

}  // namespace detail

template <>
struct op_traits<dual_cross_vit_op> {
  static constexpr const char* name = "dual_cross_attention_vit";
  static constexpr detail::value lower(detail::layer_ctx& c, const dual_cross_vit_op& op, const detail::value& x) {
    return detail::dual_cross_vit(c, op, x);
  }
  static constexpr std::int64_t flops(const dual_cross_vit_op& op, const shape& in, const shape&) {
    const auto C = in[1], P = op.patch, D = op.width, M = op.mlp;
    const auto grid = P > 0 ? (in[2] / P) * (in[3] / P) : 0, T = grid + 1;
    auto block = [&](std::int64_t lk) { return 2 * T * D * D * 2 + 2 * lk * D * 2 * D + 2 * 2 * T * lk * D + 2 * 2 * T * D * M; };
    return 2 * 2 * C * P * P * D * grid + op.depth * (2 * block(T) + block(2 * T)) + 2 * 2 * D * op.classes;
  }
};

constexpr layer dual_cross_attention_vit(std::int64_t patch, std::int64_t depth, std::int64_t width, heads h, std::int64_t mlp,
                                         std::int64_t classes) {
  return as_layer(dual_cross_vit_op{patch, depth, width, h.value, mlp, classes});
}
}  // namespace gpubudget
