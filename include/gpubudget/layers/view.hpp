// gpubudget/layers/view.hpp — shape-only ops and small reductions.
//
// flatten / reshape / transpose are views: no new storage, and a view keeps its whole base
// alive as long as anyone (a variable or a saved tensor) holds it. `transpose(..., contiguous)`
// adds the copy that `.contiguous()` makes. Per-sample dimensions: dimension 0 is the first
// dimension after the batch.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// Flattens per-sample dimensions from `start` on (nn.Flatten() is start 0).
constexpr layer flatten(std::int64_t start = 0) { layer l{}; l.kind = op::flatten; l.a[0] = start; return l; }

/// Reshapes the per-sample shape (same element count).
template <class... D>
constexpr layer reshape(D... dims) {
  static_assert(sizeof...(D) >= 1 && sizeof...(D) <= 5, "reshape(...) takes 1 to 5 dimensions");
  layer l{};
  l.kind = op::reshape;
  std::int64_t d[] = {static_cast<std::int64_t>(dims)...};
  for (std::size_t i = 0; i < sizeof...(D); ++i) l.a[i] = d[i];
  l.a[7] = sizeof...(D);
  return l;
}

/// Swaps two per-sample dimensions; `contiguous` adds the copy `.contiguous()` makes.
constexpr layer transpose(std::int64_t d0, std::int64_t d1, bool contiguous = false) {
  layer l{}; l.kind = op::transpose; l.a[0] = d0; l.a[1] = d1; l.a[2] = contiguous; return l;
}

/// Permutes the per-sample dimensions (a view), e.g. permute(1, 2, 0) for [C,H,W] -> [H,W,C].
template <class... D>
constexpr layer permute(D... order) {
  static_assert(sizeof...(D) >= 2 && sizeof...(D) <= 5, "permute(...) takes 2 to 5 dimensions");
  layer l{};
  l.kind = op::permute;
  std::int64_t d[] = {static_cast<std::int64_t>(order)...};
  for (std::size_t i = 0; i < sizeof...(D); ++i) l.a[i] = d[i];
  l.a[7] = sizeof...(D);
  return l;
}

/// Multiplies by a constant (`x * c`): a new tensor, nothing saved.
constexpr layer scale() { layer l{}; l.kind = op::scale; return l; }

/// `x[:, index]` along per-sample dimension 0 (e.g. a class token): a view.
constexpr layer select_token(std::int64_t index = 0) { layer l{}; l.kind = op::token_select; l.a[0] = index; return l; }

/// Mean over per-sample dimension `dim` (removed from the shape).
constexpr layer mean_over(std::int64_t dim) { layer l{}; l.kind = op::mean_over; l.a[0] = dim; return l; }

namespace detail::rules {

constexpr value lower_flatten(layer_ctx& c, const value& x) {
  const auto start = c.L.a[0];
  if (start < 0 || start >= x.s.rank) invalid_layer_argument();
  shape out{};
  out.rank = static_cast<int>(start) + 1;
  for (int i = 0; i < start; ++i) out[i] = x.s[i];
  std::int64_t rest = 1;
  for (int i = static_cast<int>(start); i < x.s.rank; ++i) rest = checked_mul(rest, x.s[i]);
  out[static_cast<int>(start)] = rest;
  return c.s.view(x, out);
}

constexpr value lower_reshape(layer_ctx& c, const value& x) {
  shape out{};
  out.rank = static_cast<int>(c.L.a[7]);
  for (int i = 0; i < out.rank; ++i) {
    if (c.L.a[i] <= 0) invalid_layer_argument();
    out[i] = c.L.a[i];
  }
  if (out.numel() != x.s.numel()) reshape_changes_element_count();
  return c.s.view(x, out);
}

constexpr value lower_transpose(layer_ctx& c, const value& x) {
  const auto d0 = c.L.a[0], d1 = c.L.a[1];
  if (d0 < 0 || d1 < 0 || d0 >= x.s.rank || d1 >= x.s.rank) invalid_layer_argument();
  shape out = x.s;
  out[static_cast<int>(d0)] = x.s[static_cast<int>(d1)];
  out[static_cast<int>(d1)] = x.s[static_cast<int>(d0)];
  if (!c.L.a[2]) return c.s.view(x, out);
  return copy(c.s, x, out);
}

constexpr value lower_permute(layer_ctx& c, const value& x) {
  if (c.L.a[7] != x.s.rank) shape_mismatch_between_layers();
  shape out = x.s;
  for (int i = 0; i < x.s.rank; ++i) {
    const auto from = c.L.a[i];
    if (from < 0 || from >= x.s.rank) invalid_layer_argument();
    out[i] = x.s[static_cast<int>(from)];
  }
  return c.s.view(x, out);
}

constexpr value lower_scale(layer_ctx& c, const value& x) {
  return pointwise(c.s, x, x.s, x.type, keeps::nothing);
}

constexpr value lower_select(layer_ctx& c, const value& x) {
  if (x.s.rank < 2) tensor_rank_unsupported();
  if (c.L.a[0] < 0 || c.L.a[0] >= x.s[0]) invalid_layer_argument();
  shape out{};
  out.rank = x.s.rank - 1;
  for (int i = 1; i < x.s.rank; ++i) out[i - 1] = x.s[i];
  // A view; in backward its gradient is scattered into a zero tensor of the whole input
  // (SelectBackward), which the simulator does when a partial gradient reaches a storage.
  return c.s.view(x, out);
}

constexpr value lower_mean_over(layer_ctx& c, const value& x) {
  const auto d = c.L.a[0];
  if (d < 0 || d >= x.s.rank) invalid_layer_argument();
  shape out{};
  out.rank = x.s.rank - 1;
  for (int i = 0, j = 0; i < x.s.rank; ++i) if (i != d) out[j++] = x.s[i];
  return mean_reduce(c.s, x, out);
}

}  // namespace detail::rules
}  // namespace gpubudget
