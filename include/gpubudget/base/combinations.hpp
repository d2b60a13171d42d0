// gpubudget/base/combinations.hpp — the search spaces' enumeration: every combination of choices
// in a few dimensions, shared by the single-GPU planner (planner.hpp: remedies) and the parallel
// layout ranking (distributed.hpp: engines and offload).
#pragma once
#include <array>
#include <cstddef>

namespace gpubudget::detail {

/// Calls `f(choice)` for every `choice` with 0 <= choice[d] <= last[d], the last dimension
/// varying fastest (the order of nested loops over the dimensions in turn).
template <std::size_t D, class F>
constexpr void for_each_combination(const std::array<int, D>& last, F&& f) {
  std::array<int, D> at{};
  for (;;) {
    f(static_cast<const std::array<int, D>&>(at));
    std::size_t d = D;
    for (;;) {
      if (d == 0) return;
      --d;
      if (at[d] < last[d]) {
        ++at[d];
        break;
      }
      at[d] = 0;
    }
  }
}

}  // namespace gpubudget::detail
