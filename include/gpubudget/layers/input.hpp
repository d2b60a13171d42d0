// gpubudget/layers/input.hpp — the model's input: per-sample shape and element type.
#pragma once
#include <gpubudget/detail/op_record.hpp>

namespace gpubudget {

/// The data batch: per-sample shape (rank 1..5) and element type. A source: it takes no input.
struct input_op {
  std::int64_t d0 = {};
  std::int64_t d1 = {};
  std::int64_t d2 = {};
  std::int64_t d3 = {};
  std::int64_t d4 = {};
  std::int64_t rank = {};
  std::int64_t element_type = {};  ///< a dtype
  constexpr dtype type() const { return static_cast<dtype>(element_type); }
  constexpr shape per_sample() const {
    if (rank < 1 || rank > 5) detail::invalid_layer_argument();
    const std::int64_t d[] = {d0, d1, d2, d3, d4};
    shape s{};
    s.rank = static_cast<int>(rank);
    for (int i = 0; i < s.rank; ++i) {
      if (d[i] <= 0) detail::invalid_layer_argument();
      s.dim[static_cast<std::size_t>(i)] = d[i];
    }
    return s;
  }
};

template <>
struct op_traits<input_op> {
  static constexpr const char* name = "input";
  static constexpr bool source = true;
  /// The batch lives on the device before the step (external: never part of the step's peak).
  static constexpr detail::value lower(detail::layer_ctx& c, const input_op& op, const detail::value&) {
    const shape sh = op.per_sample();
    c.input_bytes = c.s.bytes_of_value(sh, op.type());
    return detail::value{c.s.allocate(c.input_bytes, true), sh, op.type(), false};
  }
  static constexpr std::int64_t flops(const input_op&, const shape&, const shape&) { return 0; }
};

/// A dense per-sample input, e.g. `input(3, 224, 224)` for images (fp32).
template <class... D>
constexpr layer input(D... dims) {
  static_assert(sizeof...(D) >= 1 && sizeof...(D) <= 5, "input(...) takes 1 to 5 dimensions");
  std::int64_t d[5] = {static_cast<std::int64_t>(dims)...};
  return as_layer(input_op{d[0], d[1], d[2], d[3], d[4], sizeof...(D), static_cast<std::int64_t>(dtype::fp32)});
}

/// Integer token ids: `tokens(128)` is one int64 id per position.
constexpr layer tokens(std::int64_t length) { return as_layer(input_op{length, 0, 0, 0, 0, 1, static_cast<std::int64_t>(dtype::int64)}); }

}  // namespace gpubudget
