// gpubudget/layers/pooling.hpp — max, average and adaptive average pooling (2-D).
//
// PyTorch 1.13: max_pool2d_with_indices keeps its input and the int64 indices (one per output
// element); avg_pool2d and adaptive_avg_pool2d keep their whole input, even for a global 1×1
// pool whose backward needs only the shape (op_rules.md §0.7).
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

constexpr layer max_pool2d(std::int64_t kernel, stride s, padding p = padding(0)) {
  layer l{}; l.kind = op::max_pool; l.a[0] = kernel; l.a[1] = s.value; l.a[2] = p.value; return l;
}
constexpr layer max_pool2d(std::int64_t kernel) { return max_pool2d(kernel, stride(kernel)); }
constexpr layer avg_pool2d(std::int64_t kernel, stride s, padding p = padding(0)) {
  layer l = max_pool2d(kernel, s, p); l.kind = op::avg_pool; return l;
}
constexpr layer avg_pool2d(std::int64_t kernel) { return avg_pool2d(kernel, stride(kernel)); }
constexpr layer adaptive_avg_pool2d(std::int64_t out_h, std::int64_t out_w) {
  layer l{}; l.kind = op::adaptive_avg_pool; l.a[0] = out_h; l.a[1] = out_w; return l;
}

namespace detail::rules {

constexpr shape pooled_shape(const layer& L, const shape& in) {
  if (in.rank != 3) tensor_rank_unsupported();
  const auto k = L.a[0], st = L.a[1], pad = L.a[2];
  if (k <= 0 || st <= 0 || pad < 0) invalid_layer_argument();
  shape out = in;
  for (int d = 1; d <= 2; ++d) {
    out[d] = (in[d] + 2 * pad - k) / st + 1;
    if (out[d] <= 0) output_size_not_positive();
  }
  return out;
}

constexpr value lower_max_pool(layer_ctx& c, const value& x) {
  const shape out = pooled_shape(c.L, x.s);
  return pointwise(c.s, x, out, x.type, keeps::input, bytes_of(checked_mul(c.s.batch, out.numel()), dtype::int64));
}

constexpr value lower_avg_pool(layer_ctx& c, const value& x) {
  return pointwise(c.s, x, pooled_shape(c.L, x.s), x.type, keeps::input);
}

constexpr value lower_adaptive_avg_pool(layer_ctx& c, const value& x) {
  if (x.s.rank != 3) tensor_rank_unsupported();
  if (c.L.a[0] <= 0 || c.L.a[1] <= 0) invalid_layer_argument();
  return pointwise(c.s, x, make_shape(x.s[0], c.L.a[0], c.L.a[1]), x.type, keeps::input);
}

}  // namespace detail::rules
}  // namespace gpubudget
