// gpubudget/layers/graph_nn.hpp — graph layers over explicit node and edge counts (GCN, GAT).
//
// The per-sample input is [nodes, features]; a "sample" is one graph and the batch is the
// number of graphs. Edge lists are int64 [edges] source and destination indices (data, not
// counted as activations). Messages live on edges, so their tensors are edges × features.
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// Graph convolution (Kipf & Welling): z = xW; messages z[src]·norm scattered into destinations.
struct gcn_op {
  std::int64_t out_features = {};
  std::int64_t edges = {};
};
/// Graph attention (GAT): `heads` × `per_head` outputs over `edges` edges, LeakyReLU(0.2)
/// logits, softmax over each destination's incoming edges, ELU.
struct gat_op {
  std::int64_t heads = {};
  std::int64_t per_head = {};
  std::int64_t edges = {};
};

namespace detail {

/// x[idx] / index_select: a new tensor; keeps only the int64 index.
constexpr value gather_rows(sim& s, const value& x, std::int32_t index, const shape& out) {
  value y = s.make(out, x.type, x.requires_grad);
  auto n = s.record(y);
  s.save(n, value{index, {}, dtype::int64, false});
  s.grad_to(n, x);  // index_add of the gradient into zeros of x's size
  return y;
}

/// zeros(out).index_add_(0, index, src): keeps src and the index (op_rules.md §0.6).
constexpr value scatter_add(sim& s, const value& src, std::int32_t index, const shape& out) {
  value y = s.make(out, src.type, src.requires_grad);
  auto n = s.record(y);
  s.save(n, src);
  s.save(n, value{index, {}, dtype::int64, false});
  s.grad_to(n, src);
  return y;
}

constexpr value graph_conv(layer_ctx& c, const gcn_op& op, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 2) shape_mismatch_between_layers();
  const auto N = x.s[0], F = op.out_features, E = op.edges;
  if (F <= 0 || E <= 0) invalid_layer_argument();
  const auto [src, dst] = s.edge_lists(E);
  value z = linear_op(c, x, F, false, 0);
  value zs = gather_rows(s, z, src, make_shape(E, F));  // z[src]
  s.release(z);
  // · norm[e] (a per-edge constant [E, 1]: the product keeps it)
  value msg = pointwise(s, zs, zs.s, zs.type, keeps::nothing, bytes_of(checked_mul(s.batch, E), dtype::fp32));
  s.release(zs);
  value out = scatter_add(s, msg, dst, make_shape(N, F));  // into destinations
  s.release(msg);
  value biased = add_parameter(c, out, out.s, F, 1);
  s.release(out);
  return biased;
}

/// Softmax of per-edge `logits` ([E, H]) over each destination's incoming edges, as GATLayer
/// computes it: exp(logits - logits.max()) / (scatter-summed denominators)[dst]. Consumes `logits`.
constexpr value edge_softmax(sim& s, const value& logits, std::int32_t dst, std::int64_t nodes) {
  const auto E = logits.s[0], H = logits.s[1];
  // logits - logits.max(): max keeps its input and 0-d result; its backward spreads the
  // gradient over a logits-sized tensor (≈3 logits-sized buffers at its peak, op_rules.md §1)
  value mx = pointwise(s, logits, shape{}, logits.type, keeps::input, 8, 0, 2 * s.bytes_of_value(logits));
  value shifted = s.make(logits.s, logits.type, logits.requires_grad);
  if (auto n = s.record(shifted); n >= 0) {
    s.grad_to(n, logits, true);
    s.grad_to(n, mx, false, true);
  }
  s.release(mx);
  s.release(logits);
  value ex = keep_output_activation(s, shifted);  // exp
  s.release(shifted);
  value denom = scatter_add(s, ex, dst, make_shape(nodes, H));
  value denom_e = gather_rows(s, denom, dst, make_shape(E, H));  // denom[dst]
  s.release(denom);
  value alpha = multiply(s, ex, denom_e, ex.s);  // e / denom[dst]: keeps both
  s.release(ex);
  s.release(denom_e);
  return alpha;
}

/// GAT as in benchmarks/accuracy/measure.py (GATLayer), op for op.
constexpr value graph_attention(layer_ctx& c, const gat_op& op, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 2) shape_mismatch_between_layers();
  const auto N = x.s[0], H = op.heads, Dh = op.per_head, E = op.edges;
  if (H <= 0 || Dh <= 0 || E <= 0) invalid_layer_argument();
  const auto HD = checked_mul(H, Dh);
  const auto [src, dst] = s.edge_lists(E);
  value z = linear_op(c, x, HD, false, 0);  // lin(x).view(N, h, dh)
  const dtype t = z.type;
  // e_src = (z * a_src).sum(-1): the product keeps z (and the parameter); a_src's gradient is
  // computed at [N, h, dh] and reduced
  value e[2]{};
  for (int side = 0; side < 2; ++side) {
    c.add_param(HD);
    value prod = s.make(z.s, t, true);
    auto n = s.record(prod);
    s.save(n, z);
    s.grad_to(n, z);
    c.param_grads(n, HD, 1 + side);
    s.backward_temp(n, s.bytes_of_value(z));
    e[side] = reduce(s, prod, make_shape(N, H));
    s.release(prod);
  }
  value es = gather_rows(s, e[0], src, make_shape(E, H));  // e_src[src]
  value ed = gather_rows(s, e[1], dst, make_shape(E, H));  // e_dst[dst]
  s.release(e[0]);
  s.release(e[1]);
  value sum = add(s, es, ed);
  s.release(es);
  s.release(ed);
  value logits = keep_input_activation(s, sum);  // leaky_relu(., 0.2)
  s.release(sum);
  value alpha = edge_softmax(s, logits, dst, N);
  value zs = gather_rows(s, z, src, make_shape(E, HD));  // z[src]
  value msg = broadcast_multiply(s, zs, alpha, zs.s);     // alpha.unsqueeze(-1) * z[src]
  s.release(alpha);
  s.release(zs);
  value agg = scatter_add(s, msg, dst, make_shape(N, HD));
  s.release(msg);
  s.release(z);
  value out = keep_input_activation(s, agg);  // ELU
  s.release(agg);
  return out;
}

}  // namespace detail

template <>
struct op_traits<gcn_op> {
  static constexpr const char* name = "gcn";
  static constexpr detail::value lower(detail::layer_ctx& c, const gcn_op& op, const detail::value& x) { return detail::graph_conv(c, op, x); }
  static constexpr std::int64_t flops(const gcn_op& op, const shape& in, const shape&) {
    return 2 * in[0] * in.last() * op.out_features + 2 * op.edges * op.out_features;
  }
};

template <>
struct op_traits<gat_op> {
  static constexpr const char* name = "gat";
  static constexpr detail::value lower(detail::layer_ctx& c, const gat_op& op, const detail::value& x) { return detail::graph_attention(c, op, x); }
  static constexpr std::int64_t flops(const gat_op& op, const shape& in, const shape&) {
    const auto HD = op.heads * op.per_head;
    return 2 * in[0] * in.last() * HD + 4 * in[0] * HD + op.edges * (2 * HD + 10 * op.heads);
  }
};

constexpr layer gcn(std::int64_t out_features, std::int64_t edges) { return as_layer(gcn_op{out_features, edges}); }
constexpr layer gat(heads h, std::int64_t per_head, std::int64_t edges) { return as_layer(gat_op{h.value, per_head, edges}); }
}  // namespace gpubudget
