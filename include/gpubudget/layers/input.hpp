// gpubudget/layers/input.hpp — the model's input: per-sample shape and element type.
#pragma once
#include <gpubudget/detail/op_record.hpp>

namespace gpubudget {

/// The data batch: per-sample shape (rank 1..5) and element type. A source: it takes no input.
struct input_op {
  dims_field dims = {};
  std::int64_t element_type = {};  ///< a dtype
  constexpr dtype type() const { return static_cast<dtype>(element_type); }
};

template <>
struct op_traits<input_op> {
  static constexpr const char* name = "input";
  static constexpr bool source = true;
  /// The batch lives on the device before the step (external: never part of the step's peak).
  static constexpr detail::value lower(detail::layer_ctx& c, const input_op& op, const detail::value& x) {
    if (x.id >= 0) detail::second_input_inside_model();  // the walk hands a source -1 only at the start
    for (std::int64_t i = 0; i < op.dims.rank && i < 5; ++i)
      if (op.dims.d[i] <= 0) op.type() == dtype::int64 ? detail::sequence_length_must_be_positive() : detail::input_dimension_must_be_positive();
    const shape sh = op.dims.to_shape();
    c.input_bytes = c.s.bytes_of_value(sh, op.type());
    return detail::value{c.s.allocate(c.input_bytes, true), sh, op.type(), false};
  }
  static constexpr std::int64_t flops(const input_op&, const shape&, const shape&) { return 0; }
};

/// A dense per-sample input, e.g. `input(3, 224, 224)` for images (fp32).
template <class... D>
constexpr layer input(D... dims) {
  static_assert(sizeof...(D) >= 1 && sizeof...(D) <= 5, "input(...) takes 1 to 5 dimensions");
  return as_layer(input_op{dims_field::of(dims...), static_cast<std::int64_t>(dtype::fp32)});
}

/// Integer token ids: `tokens(128)` is one int64 id per position.
constexpr layer tokens(std::int64_t length) { return as_layer(input_op{dims_field::of(length), static_cast<std::int64_t>(dtype::int64)}); }

}  // namespace gpubudget
