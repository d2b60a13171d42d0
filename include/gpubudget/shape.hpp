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
  std::array<std::int64_t, 5> dim{};
  int rank = 0;

  constexpr std::int64_t numel() const { return scaled_numel(1); }
  /// factor · numel(), overflow-checked (the builtin inline: this runs for every tensor the
  /// simulator makes, and constant evaluation charges every call).
  constexpr std::int64_t scaled_numel(std::int64_t factor) const {
    std::int64_t n = factor;
    for (int i = 0; i < rank; ++i)
      if (__builtin_mul_overflow(n, dim[static_cast<std::size_t>(i)], &n)) detail::byte_count_overflows_64_bits();
    return n;
  }
  constexpr std::int64_t operator[](int i) const { return dim[static_cast<std::size_t>(i < 0 ? rank + i : i)]; }
  constexpr std::int64_t& operator[](int i) { return dim[static_cast<std::size_t>(i < 0 ? rank + i : i)]; }
  constexpr std::int64_t last() const { return rank ? dim[static_cast<std::size_t>(rank - 1)] : 1; }
  friend constexpr bool operator==(const shape&, const shape&) = default;
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
