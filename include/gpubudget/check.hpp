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

namespace detail {

/// Where the batch search stands: the largest micro-batch known to fit (`lo`, with its excess
/// `e_lo` <= 0), the smallest known not to (`hi`, `e_hi` > 0), in bytes·100 over the usable
/// capacity. A structural type, so the search can also run with one constant evaluation per
/// budget (max_micro_batch_of).
struct batch_search {
  std::int64_t lo = 0, hi = 0, e_lo = 0, e_hi = 0;
  int last = 0;         ///< endpoint replaced last time: -1 lo, +1 hi (Illinois)
  bool bisect = false;  ///< the previous step shrank the bracket by less than half
  constexpr bool done() const { return hi - lo <= 1; }
  /// Memory grows with the micro-batch almost linearly (a maximum of linear terms): interpolate
  /// between the bracketing sizes (regula falsi), or bisect when that stalled.
  constexpr std::int64_t next_guess() const {
    const auto width = hi - lo;
    auto guess = lo + (bisect ? width / 2
                              : static_cast<std::int64_t>(static_cast<double>(width) * static_cast<double>(-e_lo) /
                                                          static_cast<double>(e_hi - e_lo)));
    if (guess <= lo) guess = lo + 1;
    if (guess >= hi) guess = hi - 1;
    return guess;
  }
  /// The bracket after learning that `guess` has excess `e`.
  constexpr batch_search after(std::int64_t guess, std::int64_t e) const {
    batch_search n = *this;
    if (e <= 0) {
      n.lo = guess, n.e_lo = e, n.last = -1;
      if (last == -1) n.e_hi /= 2;
    } else {
      n.hi = guess, n.e_hi = e, n.last = 1;
      if (last == 1) n.e_lo /= 2;
    }
    n.bisect = 2 * (n.hi - n.lo) > hi - lo;
    return n;
  }
};

/// Bytes·100 by which `m` at micro-batch `mb` exceeds `percent` of the device (<= 0: fits).
/// With plan.batch larger than the micro-batch, the effective batch is kept.
template <std::size_t N>
constexpr std::int64_t micro_batch_excess(const model<N>& m, const training& plan, const device& dev, std::int64_t mb,
                                          std::int64_t percent) {
  training p = plan;
  const bool keep_effective = plan.micro_batch > 0 && plan.batch > plan.micro_batch;
  p.micro_batch = mb;
  if (!keep_effective || p.batch < mb) p.batch = mb;
  return checked_mul(budget_totals(m, p, dev).total(), 100) - checked_mul(dev.capacity, percent);
}

constexpr void check_batch_bounds(batch_bounds bounds, std::int64_t percent) {
  if (bounds.min < 1 || bounds.max < bounds.min) batch_must_be_positive();
  if (percent <= 0 || percent > 100) fail("gpubudget: max_micro_batch: percent of capacity must be in 1..100");
}

/// The rest of the search with one constant evaluation per budget: `excess<MB>` is a variable
/// template, so each budget counts against the compiler's per-evaluation limit on its own.
template <const auto& Model, training Plan, const device& Dev, std::int64_t Percent>
struct separate_budgets {
  template <std::int64_t MB>
  static constexpr std::int64_t excess = micro_batch_excess(Model, Plan, Dev, MB, Percent);

  template <batch_search S>
  static constexpr std::int64_t finish() {
    if constexpr (S.done()) {
      return S.lo;
    } else {
      constexpr auto guess = S.next_guess();
      return finish<S.after(guess, excess<guess>)>();
    }
  }
};

}  // namespace detail

/// The largest micro-batch in `bounds` for which `m` under `plan` fits `dev` using at most
/// `percent` of its capacity (0 if even `bounds.min` does not fit). With plan.batch larger than
/// the micro-batch, the effective batch is kept and accumulation absorbs the difference.
///
/// Memory grows with the micro-batch almost linearly (a maximum of linear terms), so the search
/// interpolates between the bracketing batch sizes (regula falsi, Illinois variant) and falls
/// back to bisection when that stalls: typically 4-6 budgets instead of a bisection's 12. They
/// all run in one constant evaluation; for large models in a static_assert use
/// max_micro_batch_of, which gives each budget its own.
template <std::size_t N>
constexpr std::int64_t max_micro_batch(const model<N>& m, training plan, const device& dev, batch_bounds bounds = {},
                                       std::int64_t percent = 100) {
  detail::check_batch_bounds(bounds, percent);
  detail::batch_search st{bounds.min, bounds.max, detail::micro_batch_excess(m, plan, dev, bounds.min, percent), 0};
  if (st.e_lo > 0) return 0;
  if (st.lo == st.hi) return st.lo;
  st.e_hi = detail::micro_batch_excess(m, plan, dev, bounds.max, percent);
  if (st.e_hi <= 0) return st.hi;
  while (!st.done()) {
    const auto guess = st.next_guess();
    st = st.after(guess, detail::micro_batch_excess(m, plan, dev, guess, percent));
  }
  return st.lo;
}

/// max_micro_batch for static_asserts on large models: the same search, with every budget in a
/// constant evaluation of its own. Compilers bound the work of one evaluation (Clang 14:
/// 1,048,576 steps by default, about one budget of densenet121 at 224²), so whatever model
/// budgets at compile time also gets its largest micro-batch:
///
///   constexpr auto net = models::densenet121();
///   static_assert(max_micro_batch_of<net, training{.batch = 64}, devices::v100_16gb>() >= 16);
///
/// `Model` must be a constexpr variable with static storage (namespace scope, or a static
/// member); `Plan` is a value.
template <const auto& Model, training Plan, const device& Dev, batch_bounds Bounds = batch_bounds{}, std::int64_t Percent = 100>
constexpr std::int64_t max_micro_batch_of() {
  detail::check_batch_bounds(Bounds, Percent);
  using budgets = detail::separate_budgets<Model, Plan, Dev, Percent>;
  constexpr std::int64_t e_lo = budgets::template excess<Bounds.min>;
  if constexpr (e_lo > 0) {
    return 0;
  } else if constexpr (Bounds.min == Bounds.max) {
    return Bounds.min;
  } else {
    constexpr std::int64_t e_hi = budgets::template excess<Bounds.max>;
    if constexpr (e_hi <= 0) return Bounds.max;
    else return budgets::template finish<detail::batch_search{Bounds.min, Bounds.max, e_lo, e_hi}>();
  }
}

}  // namespace gpubudget
