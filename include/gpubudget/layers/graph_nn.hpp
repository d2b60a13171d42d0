// gpubudget/layers/graph_nn.hpp — graph layers over explicit node and edge counts (GCN, GAT).
//
// The per-sample input is [nodes, features]; a "sample" is one graph and the batch is the
// number of graphs. Edge lists are int64 [edges] source and destination indices (data, not
// counted as activations). Messages live on edges, so their tensors are edges × features.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// Graph convolution (Kipf & Welling): z = xW; messages z[src]·norm scattered into destinations.
constexpr layer gcn(std::int64_t out_features, std::int64_t edges) {
  layer l{}; l.kind = op::graph_conv; l.a[0] = out_features; l.a[1] = edges; return l;
}
/// Graph attention (GAT): `heads` × `per_head` outputs over `edges` edges, LeakyReLU(0.2)
/// logits, softmax over each destination's incoming edges, ELU.
constexpr layer gat(heads h, std::int64_t per_head, std::int64_t edges) {
  layer l{}; l.kind = op::graph_attention; l.a[0] = h.value; l.a[1] = per_head; l.a[2] = edges; return l;
}

namespace detail::rules {

constexpr value lower_graph_conv(layer_ctx& c, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 2) shape_mismatch_between_layers();
  const auto N = x.s[0], F = c.L.a[0], E = c.L.a[1];
  if (F <= 0 || E <= 0) invalid_layer_argument();
  value z = linear_op(c, x, F, false, 0);
  value zs = pointwise(s, z, make_shape(E, F), z.type, keeps::nothing);          // z[src]
  value msg = pointwise(s, zs, zs.s, z.type, keeps::nothing, bytes_of(checked_mul(s.batch, E), dtype::fp32));  // · norm
  s.release(zs);
  s.release(z);
  value out = pointwise(s, msg, make_shape(N, F), z.type, keeps::nothing);       // index_add into destinations
  s.release(msg);
  value biased = add_parameter(c, out, out.s, F, 1);
  s.release(out);
  return biased;
}

constexpr value lower_graph_attention(layer_ctx& c, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 2) shape_mismatch_between_layers();
  const auto N = x.s[0], H = c.L.a[0], Dh = c.L.a[1], E = c.L.a[2];
  if (H <= 0 || Dh <= 0 || E <= 0) invalid_layer_argument();
  const auto HD = checked_mul(H, Dh);
  value z = linear_op(c, x, HD, false, 0);
  c.add_param(HD);  // a_src
  c.add_param(HD);  // a_dst
  const dtype t = z.type;
  value zs = pointwise(s, z, make_shape(E, HD), t, keeps::nothing);  // z[src]
  value zd = pointwise(s, z, make_shape(E, HD), t, keeps::nothing);  // z[dst]
  s.release(z);
  // ⟨z_src, a_src⟩, ⟨z_dst, a_dst⟩: products [E, H, Dh] keep z_src / z_dst, reduced to [E, H]
  value ps = pointwise(s, zs, zs.s, t, keeps::input);
  if (c.trainable) s.param_grads(s.record_of(ps), bytes_of(HD, c.param_type()), c.param_key * 8 + 1);
  value ls = pointwise(s, ps, make_shape(E, H), t, keeps::nothing);
  s.release(ps);
  value pd = pointwise(s, zd, zd.s, t, keeps::input);
  if (c.trainable) s.param_grads(s.record_of(pd), bytes_of(HD, c.param_type()), c.param_key * 8 + 2);
  value ld = pointwise(s, pd, make_shape(E, H), t, keeps::nothing);
  s.release(pd);
  s.release(zd);
  value logit = add(s, ls, ld);
  s.release(ls);
  s.release(ld);
  value lr = pointwise(s, logit, logit.s, t, keeps::input);  // leaky_relu(0.2)
  s.release(logit);
  value ex = pointwise(s, lr, lr.s, t, keeps::output);       // exp
  s.release(lr);
  value denom = pointwise(s, ex, make_shape(N, H), t, keeps::nothing);    // index_add over destinations
  value denom_e = pointwise(s, denom, make_shape(E, H), t, keeps::nothing);  // denom[dst]
  s.release(denom);
  value alpha = multiply(s, ex, denom_e, ex.s);               // e / denom[dst]
  s.release(ex);
  s.release(denom_e);
  value msg = multiply(s, alpha, zs, zs.s);                   // alpha · z_src
  s.release(alpha);
  s.release(zs);
  value agg = pointwise(s, msg, make_shape(N, HD), t, keeps::nothing);   // index_add into destinations
  s.release(msg);
  value out = pointwise(s, agg, agg.s, t, keeps::input);      // ELU
  s.release(agg);
  return out;
}

}  // namespace detail::rules
}  // namespace gpubudget
