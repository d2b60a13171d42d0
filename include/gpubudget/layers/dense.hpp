// gpubudget/layers/dense.hpp — linear layers and embeddings.
//
// PyTorch 1.13: `F.linear` is addmm for 2-D inputs and matmul + add_ for more dimensions
// (contiguous inputs fold into a view, no copy). The node saves its input (for the weight's
// gradient) and the weight (a parameter, not counted as an activation). Backward allocates the
// input's gradient and the weight/bias gradients.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// nn.Linear(in, out) with `in` taken from the input's last dimension.
constexpr layer linear(std::int64_t out_features) {
  layer l{};
  l.kind = op::linear;
  l.a[0] = out_features;
  return l;
}
constexpr layer linear(std::int64_t out_features, no_bias_t) {
  layer l = linear(out_features);
  l.bias = false;
  return l;
}
/// A linear layer whose weight belongs to an earlier layer (e.g. a language-model head tied to
/// the token embedding): wrap both in `shared(id, ...)` with the same id; `out_features` is
/// the tied weight's row count.
constexpr layer tied_linear(std::int64_t out_features) {
  layer l = linear(out_features);
  l.bias = false;
  l.a[1] = 1;
  return l;
}

/// nn.Embedding(num, dim) over int64 ids: output [..., dim].
constexpr layer embedding(std::int64_t num_embeddings, std::int64_t dim) {
  layer l{};
  l.kind = op::embedding;
  l.a[0] = num_embeddings;
  l.a[1] = dim;
  return l;
}

/// GPT-2's learned positions: x + wpe(arange(T)) with a [context, width] table; `T` is the
/// input's dimension 0 (at most `context`).
constexpr layer learned_positions(std::int64_t context) {
  layer l{};
  l.kind = op::learned_positions;
  l.a[0] = context;
  return l;
}

namespace detail::rules {

constexpr value lower_linear(layer_ctx& c, const value& x) {
  return linear_op(c, x, c.L.a[0], c.L.bias, 0, c.L.a[1] == 1);
}

constexpr value lower_embedding(layer_ctx& c, const value& x) {
  const auto num = c.L.a[0], dim = c.L.a[1];
  if (num <= 0 || dim <= 0) invalid_layer_argument();
  if (x.s.rank >= 5) tensor_rank_unsupported();
  c.add_param(checked_mul(num, dim));
  shape out = x.s;
  out.dim[static_cast<std::size_t>(out.rank++)] = dim;
  // The node keeps the indices (the input: usually the data batch). Backward builds a dense
  // [num, dim] gradient, which becomes .grad.
  return with_params(c, x, out, c.pure16() ? c.half_type() : dtype::fp32, checked_mul(num, dim), true);
}

constexpr value lower_learned_positions(layer_ctx& c, const value& x) {
  auto& s = c.s;
  const auto ctx = c.L.a[0];
  if (x.s.rank != 2) shape_mismatch_between_layers();
  const auto T = x.s[0], D = x.s[1];
  if (ctx <= 0 || T > ctx) invalid_layer_argument();
  // pos = arange(T) (int64, one copy for the batch), kept by the embedding's node; wpe(pos) is a
  // [T, D] tensor broadcast over the batch, freed after the add
  const auto pos = bytes_of(T, dtype::int64);
  const auto rows = bytes_of(checked_mul(T, D), dtype::fp32);
  value y = add_parameter(c, x, x.s, checked_mul(ctx, D), 0);
  s.transient(rows);
  if (auto n = s.record_of(y); n >= 0) {
    s.save_new(n, pos);
    s.backward_temp(n, rows);  // grad.sum(0) for the broadcast [T, D] operand
  } else {
    s.transient(pos);
  }
  return y;
}

}  // namespace detail::rules
}  // namespace gpubudget
