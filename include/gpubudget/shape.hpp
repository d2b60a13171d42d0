// gpubudget/shape.hpp — per-sample tensor shapes (the batch dimension is kept separately).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include <gpubudget/units.hpp>

namespace gpubudget {

/// A per-sample shape of rank 0..5 (e.g. {C, H, W} or {tokens, width}); the batch dimension is
/// not part of it, so one model description serves every batch size.
struct shape {
  /// A plain array: std::array's operator[] costs Clang 5 constant-evaluation steps per call,
  /// and every tensor the simulator makes reads these (benchmarks/compile_time/README.md).
  std::int64_t dim[5]{};
  int rank = 0;

  constexpr std::int64_t numel() const { return scaled_numel(1); }
  /// factor · numel(), overflow-checked. One statement, `factor` the running product: this runs
  /// for every tensor the simulator makes, and constant evaluation charges every statement (a
  /// loop cost Clang 5 + 2 per dimension).
  constexpr std::int64_t scaled_numel(std::int64_t factor) const {
    return __builtin_mul_overflow(factor, rank > 0 ? dim[0] : 1, &factor) || __builtin_mul_overflow(factor, rank > 1 ? dim[1] : 1, &factor) ||
                   __builtin_mul_overflow(factor, rank > 2 ? dim[2] : 1, &factor) || __builtin_mul_overflow(factor, rank > 3 ? dim[3] : 1, &factor) ||
                   __builtin_mul_overflow(factor, rank > 4 ? dim[4] : 1, &factor)
               ? (detail::byte_count_overflows_64_bits(), factor)
               : factor;
  }
  constexpr std::int64_t operator[](int i) const { return dim[static_cast<std::size_t>(i < 0 ? rank + i : i)]; }
  constexpr std::int64_t& operator[](int i) { return dim[static_cast<std::size_t>(i < 0 ? rank + i : i)]; }
  constexpr std::int64_t last() const { return rank ? dim[static_cast<std::size_t>(rank - 1)] : 1; }
  friend constexpr bool operator==(const shape&, const shape&) = default;
};

/// Up to five per-sample dimensions as a field of an op (an input's shape, a reshape's target, a
/// permutation): plain 8-byte words, as op fields must be.
struct dims_field {
  std::int64_t d[5]{};
  std::int64_t rank = 0;
  template <class... D>
  static constexpr dims_field of(D... dims) {
    static_assert(sizeof...(D) >= 1 && sizeof...(D) <= 5, "1 to 5 dimensions");
    return {{static_cast<std::int64_t>(dims)...}, static_cast<std::int64_t>(sizeof...(D))};
  }
  /// As a shape; every dimension must be positive.
  constexpr shape to_shape() const {
    if (rank < 1 || rank > 5) detail::invalid_layer_argument();
    shape s{};
    s.rank = static_cast<int>(rank);
    for (int i = 0; i < s.rank; ++i) {
      if (d[i] <= 0) detail::invalid_layer_argument();
      s.dim[static_cast<std::size_t>(i)] = d[i];
    }
    return s;
  }
};

constexpr shape make_shape(std::int64_t a) { return {{a}, 1}; }
constexpr shape make_shape(std::int64_t a, std::int64_t b) { return {{a, b}, 2}; }
constexpr shape make_shape(std::int64_t a, std::int64_t b, std::int64_t c) { return {{a, b, c}, 3}; }
constexpr shape make_shape(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) { return {{a, b, c, d}, 4}; }

inline std::string to_string(const shape& s) {
  std::string r = "[";
  for (int i = 0; i < s.rank; ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace gpubudget
