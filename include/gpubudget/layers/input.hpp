// gpubudget/layers/input.hpp — the model's input: per-sample shape and element type.
#pragma once
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// A dense per-sample input, e.g. `input(3, 224, 224)` for images (fp32).
template <class... D>
constexpr layer input(D... dims) {
  static_assert(sizeof...(D) >= 1 && sizeof...(D) <= 5, "input(...) takes 1 to 5 dimensions");
  layer l{};
  l.kind = op::input;
  std::int64_t d[] = {static_cast<std::int64_t>(dims)...};
  for (std::size_t i = 0; i < sizeof...(D); ++i) l.a[i] = d[i];
  l.a[7] = sizeof...(D);
  return l;
}

/// Integer token ids: `tokens(128)` is one int64 id per position.
constexpr layer tokens(std::int64_t length) {
  layer l = input(length);
  l.type = dtype::int64;
  return l;
}

namespace detail::rules {
constexpr shape input_shape(const layer& l) {
  shape s{};
  s.rank = static_cast<int>(l.a[7]);
  for (int i = 0; i < s.rank; ++i) {
    if (l.a[i] <= 0) invalid_layer_argument();
    s.dim[static_cast<std::size_t>(i)] = l.a[i];
  }
  return s;
}
}  // namespace detail::rules

}  // namespace gpubudget
