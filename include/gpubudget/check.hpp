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
#include <gpubudget/budget_of.hpp>

namespace gpubudget {

/// Does everything the budget counts fit the device's capacity?
/// With the allocator model (training::model_allocator): does an allocator capped at the
/// capacity less the context run the step? Under a cap PyTorch frees its cached segments and
/// retries before it raises OOM (release_cached_blocks), so that is less than the uncapped total.
constexpr bool fits(const memory_budget& b) { return b.allocator_modelled ? !b.allocator_out_of_memory : b.total() <= b.capacity; }
/// ... with only `percent` of the capacity usable (a target utilization).
constexpr bool fits(const memory_budget& b, std::int64_t percent) {
  if (percent <= 0 || percent > 100) detail::percent_of_capacity_out_of_range();
  return checked_mul(b.total(), 100) <= checked_mul(b.capacity, percent);
}

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
      : needed_mib(needed_for(b)), available_mib(b.capacity / MiB), id(b.device_id), device(b.device_name) {}
  /// The total; with the allocator model, on the side of the capacity fits(b) puts it (a capped
  /// allocator may run a step whose uncapped reserved peak is larger).
  static constexpr std::int64_t needed_for(const memory_budget& b) {
    const auto total = to_mib_ceil(b.total()), available = b.capacity / MiB;
    if (!b.allocator_modelled) return total;
    if (b.allocator_out_of_memory) return total > available ? total : available + 1;
    return total < available ? total : available;
  }
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

/// What one traced step at micro-batch `reference` predicts.
struct batch_estimate {
  std::int64_t largest = 0;       ///< the largest micro-batch the lines allow
  std::int64_t excess_above = 0;  ///< a lower bound of the predicted excess (bytes·100) at largest + 1
  std::int64_t slope = 0;         ///< bytes·100 the binding line adds per sample (the excess's slope)
  bool exact = false;             ///< every line's batch-dependent part was a whole multiple of `reference`
  bool capped_allocator = false;  ///< the caching allocator model decides what fits (the lines do not see it)
  bool accumulates = false;       ///< the traced step used gradient accumulation
};

/// Where the batch search stands: the largest micro-batch known to fit (`lo`, excess `e_lo`
/// <= 0; min - 1 while none is known), the smallest known not to (`hi`, `e_hi` > 0; max + 1 while
/// none is), and the last budget asked (`at`, `e_at`, reached by a move of `last_move` samples).
/// A structural type, so the search can also run with one constant evaluation per budget
/// (max_micro_batch_of).
///
/// The excess is a line in the micro-batch up to a regime change (a workspace at its cap, a
/// reduction changing its grid, accumulation starting), so while one end is unknown each
/// budget's excess over the traced slope says how many samples away the answer is (a Newton
/// step). Where the capped allocator model decides, the distance is the room its blocks in use
/// leave under the cap (micro_batch_excess); where they give none (it fails with room left:
/// fragmentation; it fits past it: optional workspaces given way), the excess is +-1 and the
/// steps double instead, as they do after `newton_steps` budgets (a slope the excess does not
/// follow). Once both ends are known, regula falsi (Illinois) or bisection finishes the job.
struct batch_search {
  static constexpr int newton_steps = 3;
  std::int64_t lo = 0, hi = 0, e_lo = 0, e_hi = 0;
  std::int64_t min = 1, max = 4096;
  std::int64_t at = 0, e_at = 0;  ///< the last budget asked (before the first: the estimate, unasked)
  std::int64_t last_move = 0;     ///< |at - the budget before it|
  std::int64_t slope = 0;         ///< batch_estimate::slope
  int asked = 0;                  ///< budgets asked so far
  int last = 0;                   ///< endpoint replaced last time: -1 lo, +1 hi (Illinois)
  bool bisect = false;            ///< the previous step shrank the bracket by less than half

  constexpr bool done() const { return hi - lo <= 1; }
  constexpr std::int64_t answer() const { return lo < min ? 0 : lo; }
  constexpr std::int64_t next_guess() const {
    const auto guess = asked == 0 ? at : (lo < min || hi > max) ? toward_the_unknown_end() : inside_the_bracket();
    return guess <= lo ? lo + 1 : guess >= hi ? hi - 1 : guess;
  }
  /// The search after learning that `guess` has excess `e`.
  constexpr batch_search after(std::int64_t guess, std::int64_t e) const {
    batch_search n = *this;
    const bool bracketing = lo >= min && hi <= max;
    n.last_move = asked > 0 ? (guess > at ? guess - at : at - guess) : 0;
    n.at = guess, n.e_at = e, ++n.asked;
    if (e <= 0) {
      n.lo = guess, n.e_lo = e, n.last = -1;
      if (bracketing && last == -1) n.e_hi /= 2;
    } else {
      n.hi = guess, n.e_hi = e, n.last = 1;
      if (bracketing && last == 1) n.e_lo /= 2;
    }
    n.bisect = 2 * (n.hi - n.lo) > hi - lo;
    return n;
  }

 private:
  /// A Newton step on the traced slope (at least one sample), or twice the last move when the
  /// excess carries no distance or the Newton steps are spent.
  constexpr std::int64_t toward_the_unknown_end() const {
    const auto sign = e_at <= 0 ? 1 : -1;
    if (e_at == 1 || e_at == -1 || asked > newton_steps) return at + sign * (last_move > 0 ? 2 * last_move : 1);
    const auto s = slope > 0 ? slope : 1, samples = e_at <= 0 ? -e_at / s : (e_at + s - 1) / s;
    return at + sign * (samples > 1 ? samples : 1);
  }
  /// Regula falsi between the ends, or bisection when that stalled or an end's excess carries
  /// no distance.
  constexpr std::int64_t inside_the_bracket() const {
    const auto width = hi - lo;
    if (bisect || e_lo >= -1 || e_hi <= 1) return lo + width / 2;
    return lo + static_cast<std::int64_t>(static_cast<double>(width) * static_cast<double>(-e_lo) /
                                          static_cast<double>(e_hi - e_lo));
  }
};

/// `plan` run at micro-batch `mb` (the effective batch kept when the plan accumulates).
constexpr training at_micro_batch(const training& plan, std::int64_t mb) {
  training p = plan;
  const bool keep_effective = plan.micro_batch > 0 && plan.batch > plan.micro_batch;
  p.micro_batch = mb;
  if (!keep_effective || p.batch < mb) p.batch = mb;
  return p;
}

/// Bytes·100 by which the batch search's probe `b` (a budget on `percent` of `dev`, fits_only)
/// exceeds that capacity (<= 0: fits).
constexpr std::int64_t excess_of(const memory_budget& b, const device& dev, std::int64_t percent) {
  if (!b.allocator_modelled) return checked_mul(b.total(), 100) - checked_mul(dev.capacity, percent);
  // the capped allocator decides the sign. It frees its cache and retries before an OOM, so
  // it runs until the blocks in use, not the uncapped reservation, reach the cap: their peak
  // (max_memory_allocated, beside the CUDA context) gives the search its distance
  const auto in_use = checked_add(b.cuda_context, b.allocated_total_peak);
  const auto excess = checked_mul(in_use, 100) - checked_mul(b.capacity, 100);
  return b.allocator_out_of_memory ? (excess > 0 ? excess : 1) : (excess < 0 ? excess : -1);
}

/// Bytes·100 by which `m` at micro-batch `mb` exceeds `percent` of the device (<= 0: fits).
template <std::size_t N>
constexpr std::int64_t micro_batch_excess(const model<N>& m, const training& plan, const device& dev, std::int64_t mb,
                                          std::int64_t percent) {
  return excess_of(totals_any_micro_batch(m, at_micro_batch(plan, mb), at_percent(dev, percent), /*fits_only=*/true), dev, percent);
}

/// estimate_micro_batch from the traced step `r` at micro-batch `reference` (plan `p`) and its
/// moments `trace`.
constexpr batch_estimate estimate_from(const step_result& r, const dyn_array<live_point>& trace, const training& p, const device& dev,
                                       std::int64_t reference, std::int64_t percent) {
  memory_budget b{};
  fill_budget(b, r, p, dev);
  batch_estimate e{};
  e.accumulates = p.accumulation_steps() > 1;
  e.capped_allocator = replays_allocator(p);
  e.exact = b.input_batch % reference == 0 && b.cudnn_workspace % reference == 0;
  const auto f = 100 + (p.model_allocator ? 0 : p.fragmentation_percent);
  const auto resident_fixed = b.resident() - b.input_batch, resident_per = b.input_batch / reference;
  const auto room = checked_mul(dev.capacity, percent) - checked_mul(b.cuda_context + b.cublas_workspace, 100);
  std::int64_t largest = -1, num_at = 0, den_at = 0;
  auto bound = [&](std::int64_t fixed, std::int64_t per_batch) {
    e.exact = e.exact && per_batch % reference == 0;
    const auto num = room - checked_mul(f, resident_fixed + fixed);
    const auto den = checked_mul(f, resident_per + per_batch / reference) + checked_mul(b.cudnn_workspace / reference, 100);
    const auto limit = num < 0 ? 0 : den > 0 ? num / den : std::int64_t{1} << 62;
    if (largest < 0 || limit < largest) largest = limit, num_at = num, den_at = den;
  };
  for (const auto& pt : trace) bound(pt.fixed, pt.per_batch());
  // optimizer.step() starts from the .grad tensors and adds its temporaries
  bound(r.live_after_backward_fixed + b.optimizer_temporaries, r.live_after_backward - r.live_after_backward_fixed);
  if (p.teacher.present) {  // the teacher's no-grad forward (and its weights, when offloaded)
    const auto& t = p.teacher;
    bound(t.forward_peak_bytes + (t.offloaded_to_cpu ? bytes_of(t.parameter_count, t.parameter_type) : 0), 0);
  }
  e.largest = largest;
  e.excess_above = checked_mul(den_at, largest + 1) - num_at;
  e.slope = den_at;
  return e;
}

/// Every moment of a step is live = fixed + per-sample · B, and so is every other term of the
/// device total (resident state: the input batch grows with B; workspace: the largest im2col
/// does; context and cuBLAS do not; the fragmentation reserve is a percentage). A traced step at
/// micro-batch `reference` gives each line; the largest B under every line is then a division,
/// not a search. The allocator's 512 B rounding is left out (it only adds): a confirming budget
/// at the answer settles it. The lines are as good as each rule's `fixed` bytes: a workspace at
/// its cap stops growing and must say so (conv.hpp, CV2's split-K partials), or the lines tilt and
/// the search pays for it in budgets.
template <std::size_t N>
constexpr batch_estimate estimate_micro_batch(const model<N>& m, const training& plan, const device& dev, std::int64_t reference,
                                              std::int64_t percent) {
  const training p = at_micro_batch(plan, reference);
  dyn_array<live_point> trace;
  const auto r = simulate_step<N>(m.records, p, nullptr, &trace);
  return estimate_from(r, trace, p, dev, reference, percent);
}

/// Is the estimate's answer settled by one confirming budget at it? Only when the lines were
/// exact, the step's regime (accumulation or not) is the same at the answer, they put answer + 1
/// clearly over (by more than the reserve's integer rounding), and no capped allocator model
/// decides: it frees its cache and retries before an OOM, so it runs micro-batches the
/// uncapped lines put over (ResNet-50 at 224², V100 16 GB: 171 by the lines, 183 run).
constexpr bool settled_above(const batch_estimate& e, const training& plan, std::int64_t mb) {
  const training p = at_micro_batch(plan, mb + 1);
  return e.exact && !e.capped_allocator && e.excess_above > 100 * 100 && (p.accumulation_steps() > 1) == e.accumulates;
}

/// The micro-batch to trace: a small odd size inside the bounds (odd, so that a batch-
/// independent byte count mistaken for a per-sample one rarely divides evenly and is caught).
constexpr std::int64_t reference_micro_batch(batch_bounds bounds) { return bounds.max < 7 ? bounds.max : bounds.min > 7 ? bounds.min : 7; }

constexpr void check_batch_bounds(batch_bounds bounds, std::int64_t percent) {
  if (bounds.min < 1 || bounds.max < bounds.min) batch_bounds_out_of_order();
  if (percent <= 0 || percent > 100) percent_of_capacity_out_of_range();
}

/// The search before its first budget: it asks the estimate first; when the lines settle the
/// answer's upper side (settled_above), the size above it is taken as known not to fit, so a
/// confirming budget ends the search.
constexpr batch_search start_search(const batch_estimate& e, const training& plan, batch_bounds bounds) {
  batch_search s{};
  s.min = bounds.min, s.max = bounds.max, s.lo = bounds.min - 1, s.hi = bounds.max + 1, s.slope = e.slope;
  s.at = e.largest < bounds.min ? bounds.min : e.largest > bounds.max ? bounds.max : e.largest;
  if (s.at < bounds.max && settled_above(e, plan, s.at)) s.hi = s.at + 1, s.e_hi = e.excess_above;
  return s;
}

/// max_micro_batch_of's search, with one constant evaluation per budget: the estimate and each
/// `excess<MB>` are static constexpr members, evaluated once each and counted against the
/// compiler's per-evaluation limit on their own.
template <const auto& Model, training Plan, const device& Dev, batch_bounds Bounds, std::int64_t Percent,
          std::int64_t Units = walk_units_per_evaluation>
struct separate_budgets {
  /// A probe's excess; with the caching allocator model, its replay split into one evaluation
  /// per 1,024 storages (budget_of.hpp).
  template <std::int64_t MB>
  static constexpr std::int64_t probe() {
    if constexpr (replays_allocator(Plan) || !walks_whole(Model, at_micro_batch(Plan, MB), Units))
      return excess_of(split_totals<Model, at_micro_batch(Plan, MB), Dev, Percent, /*fits_only=*/true, Units>(), Dev, Percent);
    else
      return micro_batch_excess(Model, Plan, Dev, MB, Percent);
  }
  template <std::int64_t MB>
  static constexpr std::int64_t excess = probe<MB>();

  /// The traced step, split like a budget's walk on a model too long for one evaluation.
  static constexpr batch_estimate trace_step() {
    constexpr auto reference = reference_micro_batch(Bounds);
    if constexpr (walks_whole(Model, at_micro_batch(Plan, reference), Units)) {
      return estimate_micro_batch(Model, Plan, Dev, reference, Percent);
    } else {
      constexpr training p = at_micro_batch(Plan, reference);
      const auto& last = split_walk<Model, p, /*Traced=*/true, Units>::last();
      sim s{};
      last.restore(s);
      return estimate_from(last.progress.result, s.trace, p, Dev, reference, Percent);
    }
  }
  static constexpr batch_estimate estimate = trace_step();

  template <batch_search S>
  static constexpr std::int64_t finish() {
    if constexpr (S.done()) {
      return S.answer();
    } else {
      constexpr auto next = S.next_guess();
      return finish<S.after(next, excess<next>)>();
    }
  }

  /// The same decisions as max_micro_batch, budget by budget.
  static constexpr std::int64_t answer() { return finish<start_search(estimate, Plan, Bounds)>(); }
};

}  // namespace detail

/// The largest micro-batch in `bounds` for which `m` under `plan` fits `dev` using at most
/// `percent` of its capacity (0 if even `bounds.min` does not fit). With plan.batch larger than
/// the micro-batch, the effective batch is kept and accumulation absorbs the difference.
///
/// Every moment of the step is a line in the micro-batch (batch-independent bytes plus
/// per-sample bytes), so one traced step predicts the answer and one budget confirms it. When
/// the prediction is off (allocator rounding, a regime change such as accumulation starting, a
/// capped allocator model that runs more than the uncapped lines allow), each budget's excess
/// over the traced slope moves the search (detail::batch_search). Everything runs in one
/// constant evaluation; for large models in a static_assert use max_micro_batch_of, which gives
/// each budget its own.
template <std::size_t N>
constexpr std::int64_t max_micro_batch(const model<N>& m, training plan, const device& dev, batch_bounds bounds = {},
                                       std::int64_t percent = 100) {
  detail::check_batch_bounds(bounds, percent);
  const auto est = detail::estimate_micro_batch(m, plan, dev, detail::reference_micro_batch(bounds), percent);
  auto search = detail::start_search(est, plan, bounds);
  while (!search.done()) {
    const auto next = search.next_guess();
    search = search.after(next, detail::micro_batch_excess(m, plan, dev, next, percent));
  }
  return search.answer();
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
  return detail::separate_budgets<Model, Plan, Dev, Bounds, Percent>::answer();
}

}  // namespace gpubudget
