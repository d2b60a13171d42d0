// gpubudget/check.hpp — compile-time fit checks and the largest batch that fits.
//
//   static_assert(fits(b));          // plain bool: fine in any constant expression
//   static_assert(require_fits<b>);  // on failure both GCC and Clang print needed/available MiB
//                                    // and the device, e.g.
//   model_exceeds_gpu_memory<17034, 16158, catalog_gpu::v100_16gb, device_label{"V100 16GB"}>
#pragma once
#include <cstdint>
#include <string_view>

#include <gpubudget/budget.hpp>

namespace gpubudget {

/// Does everything the budget counts fit the device's capacity?
constexpr bool fits(const memory_budget& b) { return b.total() <= b.capacity; }
/// ... with only `percent` of the capacity usable (a target utilization).
constexpr bool fits(const memory_budget& b, std::int64_t percent) { return checked_mul(b.total(), 100) <= checked_mul(b.capacity, percent); }

/// A device name usable as a template argument (so diagnostics can print it).
struct device_label {
  char text[40]{};
  constexpr device_label() = default;
  constexpr device_label(std::string_view s) {
    for (std::size_t i = 0; i < s.size() && i + 1 < sizeof text; ++i) text[i] = s[i];
  }
};

/// The part of a budget a fit check needs, as a structural type (a valid template argument).
struct fit_summary {
  std::int64_t needed_mib = 0;     ///< total, rounded up
  std::int64_t available_mib = 0;  ///< capacity, rounded down
  catalog_gpu id = catalog_gpu::custom;
  device_label device{};
  constexpr fit_summary() = default;
  constexpr fit_summary(const memory_budget& b)
      : needed_mib(to_mib_ceil(b.total())), available_mib(b.capacity / MiB), id(b.device_id), device(b.device_name) {}
  // Clang 14 allows no derived-to-base step in a converted constant expression: spell it out.
  template <std::size_t N>
  constexpr fit_summary(const model_budget<N>& b) : fit_summary(static_cast<const memory_budget&>(b)) {}
};

/// Instantiated with the numbers of a failing check, so that they appear in the diagnostic.
template <std::int64_t NeededMiB, std::int64_t AvailableMiB, catalog_gpu Catalog, device_label Device>
struct model_exceeds_gpu_memory {
  static_assert(NeededMiB <= AvailableMiB,
                "gpubudget: the model does not fit the GPU: needed MiB > available MiB (template arguments above)");
  static constexpr bool value = true;
};

/// `static_assert(require_fits<b>)`: true when `b` fits; otherwise a compile error naming the
/// needed and available MiB and the device.
template <fit_summary S>
inline constexpr bool require_fits = model_exceeds_gpu_memory<S.needed_mib, S.available_mib, S.id, S.device>::value;

/// Search bounds for the batch solver.
struct batch_bounds {
  std::int64_t min = 1;
  std::int64_t max = 4096;
};

/// The largest micro-batch in `bounds` for which `m` under `plan` fits `dev` using at most
/// `percent` of its capacity (0 if even `bounds.min` does not fit). With plan.batch larger than
/// the micro-batch, the effective batch is kept and accumulation absorbs the difference.
///
/// Memory grows with the micro-batch almost linearly (a maximum of linear terms), so the search
/// interpolates between the bracketing batch sizes (regula falsi, Illinois variant) and falls
/// back to bisection when that stalls: typically 4-6 budgets instead of a bisection's 12, which
/// matters under Clang's constexpr step limit.
template <std::size_t N>
constexpr std::int64_t max_micro_batch(const model<N>& m, training plan, const device& dev, batch_bounds bounds = {},
                                       std::int64_t percent = 100) {
  if (bounds.min < 1 || bounds.max < bounds.min) detail::batch_must_be_positive();
  const bool keep_effective = plan.micro_batch > 0 && plan.batch > plan.micro_batch;
  // excess(mb) <= 0 <=> fits; in units of bytes·100
  auto excess = [&](std::int64_t mb) {
    training p = plan;
    p.micro_batch = mb;
    if (!keep_effective || p.batch < mb) p.batch = mb;
    return checked_mul(budget_totals(m, p, dev).total(), 100) - checked_mul(dev.capacity, percent);
  };
  std::int64_t lo = bounds.min, hi = bounds.max;
  double e_lo = static_cast<double>(excess(lo));
  if (e_lo > 0) return 0;
  if (lo == hi) return lo;
  double e_hi = static_cast<double>(excess(hi));
  if (e_hi <= 0) return hi;
  int last = 0;          // endpoint replaced last time: -1 lo, +1 hi (Illinois)
  bool bisect = false;   // the previous step shrank the bracket by less than half
  while (hi - lo > 1) {
    const auto width = hi - lo;
    auto guess = lo + (bisect ? width / 2 : static_cast<std::int64_t>(static_cast<double>(width) * (-e_lo) / (e_hi - e_lo)));
    if (guess <= lo) guess = lo + 1;
    if (guess >= hi) guess = hi - 1;
    const auto e = static_cast<double>(excess(guess));
    if (e <= 0) {
      lo = guess;
      e_lo = e;
      if (last == -1) e_hi /= 2;
      last = -1;
    } else {
      hi = guess;
      e_hi = e;
      if (last == 1) e_lo /= 2;
      last = 1;
    }
    bisect = 2 * (hi - lo) > width;
  }
  return lo;
}

}  // namespace gpubudget
