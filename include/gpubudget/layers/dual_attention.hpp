// gpubudget/layers/dual_attention.hpp — the dual cross-attention ViT of seed report 001: one
// ViT's weights shared by three paths (self-attention on the target image, on the paired image,
// and pair-wise cross-attention whose keys/values are the concatenation of both).
//
// A single record, because its three paths trade tensors between them at every block; its
// lowering replays benchmarks/accuracy/measure.py's DualViT op for op.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/attention.hpp>
#include <gpubudget/layers/dense.hpp>
#include <gpubudget/layers/norm.hpp>
#include <gpubudget/layers/vision.hpp>

namespace gpubudget {

/// Input [2, C, H, W] (an image pair); output [2·classes] (target and PWCA heads). Blocks are
/// pre-norm (q and kv projections, materialized attention, GELU MLP of `mlp`).
constexpr layer dual_cross_attention_vit(std::int64_t patch, std::int64_t depth, std::int64_t width, heads h, std::int64_t mlp,
                                         std::int64_t classes) {
  layer l{};
  l.kind = op::dual_cross_vit;
  l.a[0] = patch;
  l.a[1] = depth;
  l.a[2] = width;
  l.a[3] = h.value;
  l.a[4] = mlp;
  l.a[5] = classes;
  return l;
}

namespace detail::rules {

struct vit_block_parts {
  layer ln1 = layer_norm(), attn{}, ln2 = layer_norm();
  std::int64_t mlp = 0, width = 0;
};

/// Parameter keys a block uses inside the layer: ln1, attention (3), ln2, fc, fc2.
inline constexpr std::int32_t dual_vit_block_parts = 7;

/// x + attn(LN(x), LN(kv or x)), then + MLP; `counts`: this application owns the parameters.
constexpr value dual_vit_block(layer_ctx& c, const vit_block_parts& b, std::int32_t base, const value& x, const value* kv_other,
                               bool counts) {
  auto& s = c.s;
  layer_ctx ln1 = c.sub(b.ln1, base, counts);
  value a = lower_layer_norm(ln1, x);
  value kvin = a;
  if (kv_other) {
    // LN(cat([x, other], dim=1)): the same LayerNorm on 2T tokens
    value cat = s.make(make_shape(x.s[0] + kv_other->s[0], x.s[1]), x.type, x.requires_grad || kv_other->requires_grad);
    auto n = s.record(cat);
    s.grad_to(n, x, true);
    s.grad_to(n, *kv_other, true);
    layer_ctx ln1b = c.sub(b.ln1, base, false);
    kvin = lower_layer_norm(ln1b, cat);
    s.release(cat);
    c.absorb(ln1b, base);
  } else {
    s.retain(kvin.id);
  }
  layer_ctx at = c.sub(b.attn, base + 1, counts);
  value att = attention_op(at, a, kvin);
  s.release(a);
  s.release(kvin);
  value h = add(s, x, att);
  s.release(att);
  layer_ctx ln2 = c.sub(b.ln2, base + 4, counts);
  value m = lower_layer_norm(ln2, h);
  layer_ctx fc1 = c.sub(b.ln2, 0, counts);
  value f1 = linear_op(fc1, m, b.mlp, true, base + 5);
  s.release(m);
  value g = pointwise(s, f1, f1.s, f1.type, keeps::input);  // GELU
  s.release(f1);
  layer_ctx fc2 = c.sub(b.ln2, 0, counts);
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

constexpr value lower_dual_cross_vit(layer_ctx& c, const value& x) {
  auto& s = c.s;
  const auto P = c.L.a[0], L = c.L.a[1], D = c.L.a[2], H = c.L.a[3], M = c.L.a[4], K = c.L.a[5];
  if (x.s.rank != 4 || x.s[0] != 2) shape_mismatch_between_layers();
  if (P <= 0 || L <= 0 || M <= 0 || K <= 0) invalid_layer_argument();
  const shape img = make_shape(x.s[1], x.s[2], x.s[3]);
  // embed(pair[:, 0]) and embed(pair[:, 1]): one patch embedding (parts 0..2), applied twice
  const layer pe = patch_embedding(D, P);
  value img0 = s.view(x, img), img1 = s.view(x, img);
  layer_ctx e0 = c.sub(pe, 0);
  value tx = lower_patch_embedding(e0, img0);
  c.absorb(e0, 0);
  layer_ctx e1 = c.sub(pe, 0, false);
  value ty = lower_patch_embedding(e1, img1);
  s.release(img0);
  s.release(img1);
  value tp = tx;
  s.retain(tp.id);  // p = x
  vit_block_parts b{};
  b.attn = attention(D, heads(H), attention_impl::split_qkv);
  b.mlp = M;
  b.width = D;
  for (std::int64_t l = 0; l < L; ++l) {
    const auto base = static_cast<std::int32_t>(3 + dual_vit_block_parts * l);
    value np = dual_vit_block(c, b, base, tp, &ty, true);  // p = b.cross(p, y)
    s.release(tp);
    tp = np;
    value nx = dual_vit_block(c, b, base, tx, nullptr, false);  // x = b(x)
    s.release(tx);
    tx = nx;
    value ny = dual_vit_block(c, b, base, ty, nullptr, false);  // y = b(y)
    s.release(ty);
    ty = ny;
  }
  s.release(ty);
  // head(norm(x[:, 0])) and head(norm(p[:, 0])), concatenated
  const auto tail = static_cast<std::int32_t>(3 + dual_vit_block_parts * L);
  value outs[2]{};
  const value* paths[2] = {&tx, &tp};
  for (int k = 0; k < 2; ++k) {
    value cls = s.view(*paths[k], make_shape(D));
    layer ln = layer_norm();
    layer_ctx nc = c.sub(ln, tail, k == 0);
    value n = lower_layer_norm(nc, cls);
    s.release(cls);
    layer_ctx hc = c.sub(ln, 0, k == 0);
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

}  // namespace detail::rules
}  // namespace gpubudget
