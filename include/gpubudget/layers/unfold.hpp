// gpubudget/layers/unfold.hpp — im2col (F.unfold) and the local attention built on it, with its
// depthwise-separable replacement (the two layers of seed report 000).
#pragma once
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/conv.hpp>
#include <gpubudget/layers/norm.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// F.unfold(x, kernel, padding, stride) on [C, H, W] -> [C·k², L]: the buffer that grows k²-fold.
struct unfold_op {
  std::int64_t kernel = {};
  std::int64_t padding = {};
  std::int64_t stride = {};
};

/// Bytes of F.unfold's output for a [B, C, H, W] input: B·C·k²·L elements.
constexpr std::int64_t unfold_bytes(std::int64_t batch, std::int64_t c, std::int64_t k, std::int64_t positions, dtype t) {
  return bytes_of(checked_mul(checked_mul(checked_mul(batch, c), k * k), positions), t);
}

namespace detail {


constexpr shape unfolded_shape(const shape& in, std::int64_t k, std::int64_t pad, std::int64_t st) {
  if (in.rank != 3) tensor_rank_unsupported();
  if (k <= 0) kernel_size_must_be_positive();
  if (st <= 0) stride_must_be_positive();
  if (pad < 0) invalid_layer_argument();
  if (in[1] + 2 * pad < k || in[2] + 2 * pad < k) require_input(false, unfold_kernel_larger_than_padded_input, k, padded(in, pad));
  const auto oh = (in[1] + 2 * pad - k) / st + 1, ow = (in[2] + 2 * pad - k) / st + 1;
  return make_shape(checked_mul(in[0], k * k), checked_mul(oh, ow));
}

/// F.unfold: keeps its input in 1.13 (a view keeps the whole base), nothing in 2.x (op_rules.md
/// 2.6 #4: x[1,16,32,32] saved 64K -> 0; im2col's derivatives.yaml formula reads only the input's
/// sizes, any device); on the CPU it pads a
/// copy of the input first and its backward (col2im) holds an output-sized temporary (op_rules.md §1).
constexpr value unfold(sim& s, const value& x, const shape& out) {
  const bool cpu = s.on_cpu();
  const auto k = s.torch2() ? keeps::nothing : keeps::input;
  return pointwise(s, x, out, x.type, k, 0, cpu ? s.bytes_of_value(x) : 0, cpu ? s.bytes_of_value(out, x.type) : 0);
}

}  // namespace detail

template <>
struct op_traits<unfold_op> {
  static constexpr const char* name = "unfold";
  static constexpr detail::value lower(detail::layer_ctx& c, const unfold_op& op, const detail::value& x) {
    return detail::unfold(c.s, x, detail::unfolded_shape(x.s, op.kernel, op.padding, op.stride));
  }
};

constexpr layer unfold(std::int64_t kernel, padding p = padding(0), stride s = stride(1)) {
  return as_layer(unfold_op{kernel, p.value, s.value});
}

enum class local_attention_impl : std::int64_t {
  /// qkv = Conv2d(C, 3C, 1); k, v unfolded to [heads, C/heads, k², H·W]; scores = Σ_c q·k;
  /// softmax over the k² neighbours; Σ weights·v; output Conv2d(C, C, 1); residual add.
  unfold = 0,
  /// qkv = Conv2d(C, 3C, 1) → depthwise k×k; gate = sigmoid(Σ_head-channels q·k / √(C/heads));
  /// y = gate·v; GroupNorm(1, C); output Conv2d(C, C, 1); residual add.
  depthwise = 1,
};

/// Local (k×k neighbourhood) attention over a [C, H, W] map with `heads` heads (seed 000).
struct local_attention_op {
  std::int64_t heads = {};
  std::int64_t kernel = {};
  local_attention_impl impl = {};
};

namespace detail {

/// `t.chunk(3, dim=1)[i].reshape(...)`: a view when the batch is 1, a copy otherwise (a channel
/// slice of a batched tensor is not contiguous).
constexpr value chunk_reshape(sim& s, const value& base, const shape& sh) {
  value v = s.chunk_view(base, sh);
  if (s.batch == 1) return v;
  value c = copy(s, v, sh);
  s.release(v);
  return c;
}

/// UnfoldLocalAttn of benchmarks/accuracy/measure.py between the qkv and output convolutions:
/// k and v unfolded, scores over the k² neighbours, softmax, weighted sum. Returns [C, H·W].
constexpr value unfold_attention_core(sim& s, const value& qkv, const shape& chw, std::int64_t heads, std::int64_t K) {
  const auto C = chw[0], HW = chw[1] * chw[2];
  value q = chunk_reshape(s, qkv, make_shape(C, HW));
  value kk = s.chunk_view(qkv, chw), v = s.chunk_view(qkv, chw);
  const shape unf = make_shape(C * K, HW);
  value ku = unfold(s, kk, unf);  // F.unfold(k, k, padding=k//2) -> [B, C·k², H·W]
  s.release(kk);
  value vu = unfold(s, v, unf);
  s.release(v);
  value prod = broadcast_multiply(s, ku, q, unf);  // q · k for every neighbour
  value scores = reduce(s, prod, make_shape(heads * K, HW));  // .sum(dim=2) over head channels
  s.release(prod);
  value att = softmax_op(s, scores);  // over the k² neighbours
  s.release(scores);
  value weighted = broadcast_multiply(s, vu, att, unf);
  value y = reduce(s, weighted, make_shape(C, HW));  // .sum(dim=3) over the neighbours
  s.release(weighted);
  s.release(q);
  s.release(ku);
  s.release(vu);
  s.release(att);
  return y;
}

/// DWConvGate of benchmarks/accuracy/measure.py between the qkv and output convolutions:
/// depthwise k×k, a sigmoid gate from q·k per head, GroupNorm(1, C). Returns [C, H, W].
constexpr value depthwise_gate_core(layer_ctx& c, const value& qkv, const shape& chw, std::int64_t heads, std::int64_t k) {
  auto& s = c.s;
  const auto H = chw[1], W = chw[2];
  value t = convolution(c, qkv, make_conv(false, 2, 0, k, depthwise, padding(k / 2), no_bias), 1);  // depthwise over 3C
  value q = chunk_reshape(s, t, chw), kk = chunk_reshape(s, t, chw), v = chunk_reshape(s, t, chw);
  s.release(t);
  value prod = multiply(s, q, kk, chw);
  value summed = reduce(s, prod, make_shape(heads, H, W));  // .sum(dim=2, keepdim=True)
  s.release(prod);
  value scaled = pointwise(s, summed, summed.s, summed.type, keeps::nothing);  // / sqrt(C/heads)
  s.release(summed);
  value gate = keep_output_activation(s, scaled);  // sigmoid
  s.release(scaled);
  value gated = broadcast_multiply(s, v, gate, chw);
  s.release(gate);
  s.release(q);
  s.release(kk);
  s.release(v);
  layer_ctx gn = c.sub(2);
  value y = op_traits<group_norm_op>::lower(gn, group_norm_op{1}, gated);
  c.absorb(gn, 2);
  s.release(gated);
  return y;
}

}  // namespace detail

template <>
struct op_traits<local_attention_op> {
  static constexpr const char* name = "local_attention";
  static constexpr detail::value lower(detail::layer_ctx& c, const local_attention_op& op, const detail::value& x) {
    auto& s = c.s;
    if (x.s.rank != 3) detail::tensor_rank_unsupported();
    const auto C = x.s[0], heads = op.heads, k = op.kernel;
    if (heads <= 0) detail::heads_must_be_positive();
    if (k <= 0) detail::kernel_size_must_be_positive();
    if (C % heads != 0) detail::heads_do_not_divide_model_width();
    const shape chw = x.s;
    detail::value qkv = detail::convolution(c, x, detail::make_conv(false, 2, 3 * C, 1, no_bias), 0);  // Conv2d(C, 3C, 1, bias=False)
    detail::value y = op.impl == local_attention_impl::unfold ? detail::unfold_attention_core(s, qkv, chw, heads, k * k)
                                                              : detail::depthwise_gate_core(c, qkv, chw, heads, k);
    s.release(qkv);
    detail::value yv = s.view(y, chw);
    s.release(y);
    detail::value out = detail::convolution(c, yv, detail::make_conv(false, 2, C, 1), 3);  // Conv2d(C, C, 1)
    s.release(yv);
    detail::value res = detail::add(s, x, out);
    s.release(out);
    return res;
  }
  static constexpr std::int64_t flops(const local_attention_op& op, const shape& in, const shape&) {
    const auto C = in[0], HW = in[1] * in[2], K = op.kernel * op.kernel;
    const auto proj = 2 * C * 3 * C * HW + 2 * C * C * HW;
    return proj + (op.impl == local_attention_impl::unfold ? 2 * 2 * C * K * HW : 2 * 3 * C * K * HW + 4 * C * HW);
  }
};

constexpr layer local_attention(heads h, std::int64_t kernel, local_attention_impl impl) {
  return as_layer(local_attention_op{h.value, kernel, impl});
}

}  // namespace gpubudget
