// gpubudget/planner.hpp — "what is the cheapest change that makes this fit?", at compile time.
//
//   constexpr auto plans = plan_fit(net, training{.batch = 16, .micro_batch = 8, .precision = amp_fp16},
//                                   devices::generic_16gb, plan_constraints{.keep_effective_batch = true});
//   static_assert(plans.best().fits);                      // something fits
//   static_assert(plans.best().plan.batch == 16);          // ... at the same effective batch
//   std::cout << plan_table(plans);                        // every fitting plan, cheapest first
//
// The planner searches the remedies the seed reports use — a smaller micro-batch with gradient
// accumulation, autocast (AMP), gradient checkpointing, freezing (`training::train_only`),
// offloading a distillation teacher, a cheaper optimizer, and a smaller member of a model family
// (smaller input, fewer channels or layers, another layer implementation) — and returns the
// plans that fit, ordered by the cost model below. Each candidate costs one budget simulation.
//
// ## Search
//
// A plan is a choice in each of six dimensions (precision, checkpointing, freezing, teacher,
// optimizer, family member; "as configured" is one of the choices) plus a micro-batch (or, when
// the effective batch may change, a batch). Choices are combined up to
// `plan_constraints::max_remedies` at a time, fewest first. For each combination the planner
// tries the configured micro-batch, then binary-searches the divisors of the effective batch
// below it (memory grows with the micro-batch) for the largest that fits. A combination is
// skipped when a subset of it already fits at the configured micro-batch (it could only cost
// more), and its search starts above the best micro-batch any fitting subset reached (a smaller
// one could only cost more). A few dozen combinations, a few simulations each; with Clang's
// default 1M-step constexpr limit that is fine for small models at compile time, while large
// models are better planned at run time (the same constexpr functions) with `static_assert`s on
// cheaper facts. A distillation teacher's no-grad forward peak (training::teacher) is scaled
// linearly with the micro-batch, at the precision it was computed for: the planner has the
// teacher's numbers, not its model (max_micro_batch_distilled re-simulates it exactly).
//
// ## Cost model (per-mille of one optimizer step's time, or its equivalent in lost capacity)
//
// cost = recompute + per_extra_micro_step · extra_steps + lost_capacity + fixed penalties, with:
//  * recompute: checkpointing re-runs the forward of every checkpointed block once in backward.
//    With backward ≈ 2 × forward, a step is ≈ 3 forwards, so recompute = 1000 · F_ckpt / (3 · F)
//    where F is the model's forward FLOPs and F_ckpt those inside checkpointed blocks (FLOPs are
//    estimated per layer from the shapes the budget walk computes: 2·MACs of matmuls and
//    convolutions, attention's score and value products, one FLOP per output element elsewhere).
//    Checkpointing everything costs ≈ 333 ‰ (seed 001 reports "~20-30 % slower").
//  * extra steps: forward/backward passes per optimizer step beyond the configured ones
//    (accumulation 2 → 4 is 2 extra steps). Same FLOPs, but smaller kernels and per-pass
//    overhead: `per_extra_micro_step` (default 20 ‰ each; seed 001 reports "~5 %" for 2 → 4).
//  * lost capacity: freezing = 1000 · (1 − trainable / configured trainable); a smaller family
//    member = 1000 · max(1 − params / configured params, 1 − input / configured input) unless
//    the member states its own figure; a smaller effective batch (only when
//    `keep_effective_batch` is false) = 1000 · (1 − batch / configured batch).
//  * fixed penalties (`cost_model`): AMP fp16 10 ‰ (loss scaling), AMP bf16 5 ‰ (no AMP bf16
//    on devices below compute capability 8.0, where it is not offered), teacher offload 150 ‰
//    (seed 002: "~10-20 % training slowdown"), optimizer change 250 ‰ (a different algorithm
//    with its own hyper-parameters: a capacity risk rather than a speed cost).
// Ties go to the plan with more headroom. The weights are data: pass your own `cost_model`.
#pragma once
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <gpubudget/budget.hpp>
#include <gpubudget/check.hpp>
#include <gpubudget/base/combinations.hpp>
#include <gpubudget/devices.hpp>
#include <gpubudget/graph.hpp>
#include <gpubudget/flops.hpp>
#include <gpubudget/training.hpp>

namespace gpubudget {

/// The remedies a plan may apply (a bit set).
enum class remedy : std::uint32_t {
  none = 0,
  accumulation = 1u << 0,       ///< smaller micro-batch, same effective batch (gradient accumulation)
  smaller_batch = 1u << 1,      ///< smaller effective batch (only without keep_effective_batch)
  amp = 1u << 2,                ///< autocast fp16 / bf16 (from fp32)
  checkpoint_blocks = 1u << 3,  ///< training::checkpoint_blocks (every repetition of repeat(...))
  checkpoint_all = 1u << 4,     ///< training::checkpoint_all (every top-level block)
  freeze = 1u << 5,             ///< training::train_only = one of plan_constraints::train_only
  teacher_offload = 1u << 6,    ///< distillation teacher kept in host memory
  optimizer = 1u << 7,          ///< a cheaper optimizer (AdamW -> SGD with momentum)
  model_variant = 1u << 8,      ///< another member of the model family (smaller input, fewer channels, ...)
  all = (1u << 9) - 1,
};
constexpr remedy operator|(remedy a, remedy b) { return static_cast<remedy>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b)); }
constexpr remedy operator&(remedy a, remedy b) { return static_cast<remedy>(static_cast<std::uint32_t>(a) & static_cast<std::uint32_t>(b)); }
constexpr remedy operator~(remedy a) { return static_cast<remedy>(~static_cast<std::uint32_t>(a) & static_cast<std::uint32_t>(remedy::all)); }
/// Does `set` contain every remedy of `r`?
constexpr bool has(remedy set, remedy r) { return (set & r) == r && r != remedy::none; }

/// Weights of the cost model, in per-mille of a step (see the header comment).
struct cost_model {
  std::int64_t per_extra_micro_step = 20;
  std::int64_t amp_fp16 = 10;
  std::int64_t amp_bf16 = 5;
  std::int64_t teacher_offload = 150;
  std::int64_t optimizer_change = 250;
  /// multiplies every lost-capacity term (freezing, smaller member, smaller effective batch)
  std::int64_t lost_capacity_percent = 100;
};

/// What the planner may change.
struct plan_constraints {
  /// The effective batch (plan.batch) stays; only the micro-batch may shrink.
  bool keep_effective_batch = true;
  /// Only family members declared with the same architecture (a checkpointing variant) qualify.
  bool keep_architecture = true;
  remedy allowed = remedy::all;
  /// A plan fits when its device total is at most this share of the capacity.
  std::int64_t utilization_percent = 100;
  /// Non-batch remedies combined in one plan (the micro-batch comes on top).
  int max_remedies = 2;
  /// Freezing candidates: training::train_only prefixes (nullptr = unused slot).
  std::array<const char*, 4> train_only{};
  /// Optimizers to try instead of the configured one (optimizer_kind::none = unused slot).
  std::array<optimizer_kind, 2> optimizers{optimizer_kind::sgd_momentum, optimizer_kind::none};
  /// Hard cap on budget simulations (a search that reaches it stops and says so).
  std::int64_t max_simulations = 400;
  cost_model cost{};
};

/// One member of a model family: a label, the model, and how it differs from the first member.
template <std::size_t N>
struct family_member {
  std::string_view label{};
  model<N> net{};
  /// remedy::model_variant (changes the architecture), or a checkpointing remedy for a member
  /// that only places checkpoints differently (same architecture).
  remedy kind = remedy::model_variant;
  /// Lost capacity in per-mille; negative: computed from parameters and input size.
  std::int64_t lost_capacity_permille = -1;
};
template <std::size_t N>
constexpr family_member<N> variant(std::string_view label, const model<N>& m, remedy kind = remedy::model_variant,
                                   std::int64_t lost_capacity_permille = -1) {
  return family_member<N>{label, m, kind, lost_capacity_permille};
}

/// One evaluated plan.
struct fit_plan {
  bool fits = false;
  training plan{};
  std::size_t member = 0;          ///< index in the family (0 = the configured model)
  std::string_view member_label{};
  remedy remedies = remedy::none;  ///< what it changes relative to the configuration
  std::int64_t total = 0;          ///< device total (bytes)
  std::int64_t capacity = 0;
  std::int64_t usable = 0;         ///< capacity · utilization_percent / 100
  std::int64_t parameter_count = 0, trainable_count = 0;
  std::int64_t recompute_permille = 0;
  std::int64_t extra_steps = 0;
  std::int64_t lost_capacity_permille = 0;
  std::int64_t penalty_permille = 0;  ///< AMP, teacher offload, optimizer change
  std::int64_t cost = 0;              ///< the sum, with the weights applied
  constexpr std::int64_t headroom() const { return usable - total; }
};

/// The planner's answer: the configuration as given, and up to `Capacity` fitting plans,
/// cheapest first.
template <std::size_t Capacity>
struct fit_plans {
  fit_plan configured{};
  std::array<fit_plan, Capacity> plans{};
  std::size_t count = 0;
  std::int64_t simulations = 0;
  std::int64_t combinations = 0;
  bool truncated = false;  ///< max_simulations reached, or more fitting plans than Capacity
  constexpr bool any() const { return count > 0; }
  /// The cheapest fitting plan; a record with fits == false when nothing fits.
  constexpr fit_plan best() const { return count > 0 ? plans[0] : fit_plan{}; }
  constexpr const fit_plan* begin() const { return plans.data(); }
  constexpr const fit_plan* end() const { return plans.data() + count; }
};

namespace detail {

// --- the search ---------------------------------------------------------------------------------

/// A combination of choices; 0 in a dimension = as configured.
struct plan_choice {
  std::uint8_t precision = 0;  ///< 1 amp_fp16, 2 amp_bf16
  std::uint8_t ckpt = 0;       ///< 1 blocks, 2 all
  std::uint8_t freeze = 0;     ///< 1 + index into train_only
  std::uint8_t teacher = 0;    ///< 1 offloaded
  std::uint8_t optim = 0;      ///< 1 + index into optimizers
  std::uint8_t member = 0;     ///< family index
  constexpr int size() const {
    return (precision != 0) + (ckpt != 0) + (freeze != 0) + (teacher != 0) + (optim != 0) + (member != 0);
  }
  /// Every choice `a` makes, `b` makes too.
  friend constexpr bool subset(const plan_choice& a, const plan_choice& b) {
    return (a.precision == 0 || a.precision == b.precision) && (a.ckpt == 0 || a.ckpt == b.ckpt) &&
           (a.freeze == 0 || a.freeze == b.freeze) && (a.teacher == 0 || a.teacher == b.teacher) &&
           (a.optim == 0 || a.optim == b.optim) && (a.member == 0 || a.member == b.member);
  }
};

constexpr bool same_text(const char* a, const char* b) {
  if (a == b) return true;
  if (!a || !b) return false;
  for (; *a && *a == *b; ++a, ++b) {}
  return *a == *b;
}

constexpr std::int64_t permille_lost(std::int64_t now, std::int64_t before) {
  if (before <= 0 || now >= before) return 0;
  return 1000 - checked_mul(now, 1000) / before;
}

/// The family as one object: budgets and profiles by member index.
template <class... Members>
struct family_view {
  std::tuple<const Members&...> members;
  static constexpr std::size_t size = sizeof...(Members);

  template <class F>
  constexpr void visit(std::size_t index, F&& f) const {
    visit_impl(index, f, std::make_index_sequence<size>{});
  }
  template <class F, std::size_t... I>
  constexpr void visit_impl(std::size_t index, F& f, std::index_sequence<I...>) const {
    ((index == I ? (f(std::get<I>(members)), 0) : 0), ...);
  }
};

struct member_info {
  std::string_view label{};
  remedy kind = remedy::model_variant;
  std::int64_t declared_lost = -1;
  flop_profile flops{};
  bool profiled = false;
  bool has_repeat = true;  ///< holds a repeat(...) block: checkpoint_blocks is a remedy for it
};

template <std::size_t Capacity, class... Members>
struct planner {
  training base;
  device dev;
  plan_constraints c;
  family_view<Members...> family;
  std::array<member_info, sizeof...(Members)> info{};
  fit_plans<Capacity> out{};
  bool need_flops = false;

  constexpr std::int64_t usable() const { return checked_mul(dev.capacity, c.utilization_percent) / 100; }

  constexpr bool bf16_supported() const { return dev.compute_capability == 0 || dev.compute_capability >= 80; }

  constexpr training apply(const plan_choice& ch) const {
    training p = base;
    if (ch.precision == 1) p.precision = precision_mode::amp_fp16;
    if (ch.precision == 2) p.precision = precision_mode::amp_bf16;
    if (ch.ckpt == 1) p.checkpoint_blocks = true;
    if (ch.ckpt == 2) p.checkpoint_all = true;
    if (ch.freeze > 0) p.train_only = c.train_only[ch.freeze - 1u];
    if (ch.teacher == 1) p.teacher.offloaded_to_cpu = true;
    if (ch.optim > 0) p.optimizer = c.optimizers[ch.optim - 1u];
    return p;
  }

  /// A micro-batch (and batch) applied to `p`; a teacher's forward peak scales with it.
  constexpr training with_batch(training p, std::int64_t batch, std::int64_t micro) const {
    p.batch = batch;
    p.micro_batch = micro == batch ? 0 : micro;
    if (p.teacher.present && base.micro() > 0)
      p.teacher.forward_peak_bytes = checked_mul(base.teacher.forward_peak_bytes, micro) / base.micro();
    return p;
  }

  constexpr memory_budget run(std::size_t member, const training& p) {
    ++out.simulations;
    memory_budget b{};
    family.visit(member, [&](const auto& m) { b = budget_totals(m.net, p, dev); });
    return b;
  }

  constexpr const flop_profile& flops_of(std::size_t member) {
    auto& in = info[member];
    if (!in.profiled) {
      family.visit(member, [&](const auto& m) { in.flops = profile_of(m.net, dev); });
      in.profiled = true;
    }
    return in.flops;
  }

  /// Extra forward recomputation of plan `p` of `member` over the configured plan, in ‰ of a
  /// step (a step ≈ 3 forwards).
  constexpr std::int64_t recompute_permille(std::size_t member, const training& p) {
    if (!(need_flops || member != 0 || p.checkpoint_all || p.checkpoint_blocks || base.checkpoint_all || base.checkpoint_blocks)) return 0;
    const auto& f = flops_of(member);
    const auto& f0 = flops_of(0);
    const auto now = checked_mul(f.checkpointed(p), 1000) / (3 * f.total);
    const auto before = checked_mul(f0.checkpointed(base), 1000) / (3 * f0.total);
    return now > before ? now - before : 0;
  }

  /// Lost capacity: the share of the configured trainable parameters a freeze stops training,
  /// or what a smaller family member gives up (declared, else its parameter / input shrinkage);
  /// the larger of the two counts.
  constexpr std::int64_t lost_capacity_permille(std::size_t member, bool freezes, const memory_budget& b) {
    std::int64_t lost = freezes ? permille_lost(b.trainable_count, out.configured.trainable_count) : 0;
    if (member != 0 && info[member].kind == remedy::model_variant) {
      std::int64_t m = info[member].declared_lost;
      if (m < 0) {
        const auto& f = flops_of(member);
        const auto& f0 = flops_of(0);
        const auto by_params = permille_lost(f.parameter_count, f0.parameter_count);
        const auto by_input = permille_lost(f.input_elements, f0.input_elements);
        m = by_params > by_input ? by_params : by_input;
      }
      lost = lost > m ? lost : m;
    }
    return lost;
  }

  /// Scores a configuration of member `member` against the configured one.
  constexpr fit_plan score(std::size_t member, const training& p, const memory_budget& b) {
    fit_plan r{};
    r.plan = p;
    r.member = member;
    r.member_label = info[member].label;
    r.total = b.total();
    r.capacity = b.capacity;
    r.usable = usable();
    r.fits = fits(b, c.utilization_percent);
    r.parameter_count = b.parameter_count;
    r.trainable_count = b.trainable_count;
    remedy rs = remedy::none;
    const auto& w = c.cost;
    // batch
    if (p.batch < base.batch) {
      rs = rs | remedy::smaller_batch;
      r.lost_capacity_permille += permille_lost(p.batch, base.batch);
    }
    if (p.accumulation_steps() > base.accumulation_steps()) {
      rs = rs | remedy::accumulation;
      r.extra_steps = p.accumulation_steps() - base.accumulation_steps();
    }
    // precision
    if (p.precision != base.precision) {
      rs = rs | remedy::amp;
      r.penalty_permille += p.precision == precision_mode::amp_bf16 ? w.amp_bf16 : w.amp_fp16;
    }
    // checkpointing (flags, or a member that places checkpoints differently)
    if (p.checkpoint_blocks != base.checkpoint_blocks) rs = rs | remedy::checkpoint_blocks;
    if (p.checkpoint_all != base.checkpoint_all) rs = rs | remedy::checkpoint_all;
    if (member != 0) rs = rs | info[member].kind;
    r.recompute_permille = recompute_permille(member, p);
    // freezing
    if (!same_text(p.train_only, base.train_only) || p.freeze_all != base.freeze_all) rs = rs | remedy::freeze;
    r.lost_capacity_permille += lost_capacity_permille(member, has(rs, remedy::freeze), b);
    if (p.teacher.offloaded_to_cpu != base.teacher.offloaded_to_cpu) {
      rs = rs | remedy::teacher_offload;
      r.penalty_permille += w.teacher_offload;
    }
    if (p.optimizer != base.optimizer) {
      rs = rs | remedy::optimizer;
      r.penalty_permille += w.optimizer_change;
    }
    r.remedies = rs;
    r.cost = r.recompute_permille + w.per_extra_micro_step * r.extra_steps +
             checked_mul(r.lost_capacity_permille, w.lost_capacity_percent) / 100 + r.penalty_permille;
    return r;
  }

  constexpr bool budget_left() {
    if (out.simulations >= c.max_simulations) { out.truncated = true; return false; }
    return true;
  }

  /// Keeps `r` unless a kept plan with a subset of its choices reaches the same micro-batch and
  /// batch for no more cost.
  constexpr void keep(const fit_plan& r, const plan_choice& ch, std::array<plan_choice, Capacity>& choices) {
    for (std::size_t k = 0; k < out.count; ++k) {
      const auto& o = out.plans[k];
      if (subset(choices[k], ch) && o.cost <= r.cost && o.plan.micro() >= r.plan.micro() && o.plan.batch >= r.plan.batch) return;
    }
    std::size_t at = out.count;
    if (out.count == Capacity) {
      out.truncated = true;
      if (!less(r, out.plans[Capacity - 1])) return;
      at = Capacity - 1;
    } else {
      ++out.count;
    }
    while (at > 0 && less(r, out.plans[at - 1])) {
      out.plans[at] = out.plans[at - 1];
      choices[at] = choices[at - 1];
      --at;
    }
    out.plans[at] = r;
    choices[at] = ch;
  }
  static constexpr bool less(const fit_plan& a, const fit_plan& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    return a.total < b.total;
  }

  constexpr bool dimension_ok(const plan_choice& ch) const {
    if (ch.precision == 2 && !bf16_supported()) return false;
    if (ch.member > 0) {
      const auto k = info[ch.member].kind;
      if (k == remedy::model_variant && c.keep_architecture) return false;
      if (!has(c.allowed, k)) return false;
    }
    return true;
  }

  /// How far each dimension of a plan goes, and the micro-batches accumulation may use.
  struct search_space {
    std::array<std::int64_t, 64> divisors{};  ///< divisors of the effective batch below the configured micro, descending
    std::size_t n_divisors = 0;
    bool may_shrink_batch = false;
    int n_prec = 0, n_ckpt = 2, n_freeze = 0, n_teacher = 0, n_opt = 0, n_member = 0;
  };

  constexpr search_space space() const {
    search_space sp{};
    const auto B = base.batch, M = base.micro();
    if (has(c.allowed, remedy::accumulation))
      for (std::int64_t d = M - 1; d >= 1 && sp.n_divisors < sp.divisors.size(); --d)
        if (B % d == 0) sp.divisors[sp.n_divisors++] = d;
    sp.may_shrink_batch = !c.keep_effective_batch && has(c.allowed, remedy::smaller_batch);
    sp.n_prec = base.precision == precision_mode::fp32 && has(c.allowed, remedy::amp) ? 2 : 0;
    if (has(c.allowed, remedy::freeze))
      while (sp.n_freeze < 4 && c.train_only[static_cast<std::size_t>(sp.n_freeze)]) ++sp.n_freeze;
    sp.n_teacher = base.teacher.present && !base.teacher.offloaded_to_cpu && has(c.allowed, remedy::teacher_offload) ? 1 : 0;
    if (has(c.allowed, remedy::optimizer))
      while (sp.n_opt < 2 && c.optimizers[static_cast<std::size_t>(sp.n_opt)] != optimizer_kind::none) ++sp.n_opt;
    sp.n_member = static_cast<int>(sizeof...(Members)) - 1;
    return sp;
  }

  /// Calls `f` on every allowed combination of exactly `size` remedies.
  template <class F>
  constexpr void for_each_choice(const search_space& sp, int size, F&& f) const {
    const std::array<int, 6> last{sp.n_prec, sp.n_ckpt, sp.n_freeze, sp.n_teacher, sp.n_opt, sp.n_member};
    for_each_combination(last, [&](const std::array<int, 6>& c) {
      const plan_choice ch{static_cast<std::uint8_t>(c[0]), static_cast<std::uint8_t>(c[1]), static_cast<std::uint8_t>(c[2]),
                           static_cast<std::uint8_t>(c[3]), static_cast<std::uint8_t>(c[4]), static_cast<std::uint8_t>(c[5])};
      if (ch.size() == size && allowed(ch)) f(ch);  // size 0: the configuration, batch changes only
    });
  }

  constexpr bool allowed(const plan_choice& ch) const {
    if (ch.ckpt == 1 && (!has(c.allowed, remedy::checkpoint_blocks) || base.checkpoint_blocks || !info[ch.member].has_repeat)) return false;
    if (ch.ckpt == 2 && (!has(c.allowed, remedy::checkpoint_all) || base.checkpoint_all)) return false;
    return dimension_ok(ch);
  }

  /// The largest micro-batch among the divisors above `floor_micro` that fits (0: none); keeps
  /// its plan.
  constexpr std::int64_t keep_largest_divisor(std::size_t mem, const training& p, const plan_choice& ch, const search_space& sp,
                                              std::int64_t floor_micro, std::array<plan_choice, Capacity>& choices) {
    std::size_t lo_n = 0;  // candidates: divisors[0 .. lo_n) are above floor_micro (descending)
    while (lo_n < sp.n_divisors && sp.divisors[lo_n] > floor_micro) ++lo_n;
    if (lo_n == 0 || !budget_left()) return 0;
    memory_budget good_b{};
    auto fits_at = [&](std::size_t k) {
      const auto b = run(mem, with_batch(p, base.batch, sp.divisors[k]));
      const bool ok = fits(b, c.utilization_percent);
      if (ok) good_b = b;
      return ok;
    };
    if (!fits_at(lo_n - 1)) return 0;  // not even the smallest candidate
    std::size_t good = lo_n - 1, bad_plus1 = 0;  // fits at good; the answer is in [bad_plus1, good]
    memory_budget kept = good_b;
    while (bad_plus1 < good && budget_left()) {
      const auto mid = bad_plus1 + (good - bad_plus1) / 2;
      if (fits_at(mid)) { good = mid; kept = good_b; }
      else bad_plus1 = mid + 1;
    }
    keep(score(mem, with_batch(p, base.batch, sp.divisors[good]), kept), ch, choices);
    return sp.divisors[good];
  }

  /// The largest batch below the configured micro-batch (no accumulation) that fits; keeps its plan.
  constexpr void keep_largest_batch(std::size_t mem, const training& p, const plan_choice& ch, std::array<plan_choice, Capacity>& choices) {
    const auto M = base.micro();
    memory_budget good_b{};
    auto fits_b = [&](std::int64_t bb) {
      const auto b = run(mem, with_batch(p, bb, bb));
      const bool ok = fits(b, c.utilization_percent);
      if (ok) good_b = b;
      return ok;
    };
    if (M <= 1 || !fits_b(1)) return;
    std::int64_t lo = 1, hi = M;  // fits(lo), !fits(hi)
    memory_budget kept = good_b;
    while (hi - lo > 1 && budget_left()) {
      const auto mid = lo + (hi - lo) / 2;
      if (fits_b(mid)) { lo = mid; kept = good_b; }
      else hi = mid;
    }
    keep(score(mem, with_batch(p, lo, lo), kept), ch, choices);
  }

  /// Combinations of remedies, fewest first; each at the configured micro-batch, else at the
  /// largest divisor (and, when allowed, the largest smaller batch) that fits.
  constexpr void search() {
    const auto sp = space();
    const auto M = base.micro();
    std::array<plan_choice, Capacity> choices{};
    // choices that fit at the configured micro-batch, and the best micro of other fitting ones
    std::array<plan_choice, 128> fitting{};
    std::array<std::int64_t, 128> fitting_micro{};
    std::size_t n_fitting = 0;
    bool stopped = false;
    for (int size = 0; size <= c.max_remedies && !stopped; ++size) {
      for_each_choice(sp, size, [&](const plan_choice& ch) {
        if (stopped) return;
        // a fitting subset bounds the useful micro-batches from below
        std::int64_t floor_micro = 0;
        for (std::size_t k = 0; k < n_fitting; ++k) {
          if (!subset(fitting[k], ch)) continue;
          if (fitting_micro[k] >= M) return;  // dominated: a subset already fits as configured
          if (fitting_micro[k] > floor_micro) floor_micro = fitting_micro[k];
        }
        ++out.combinations;
        const training p = apply(ch);
        const std::size_t mem = ch.member;
        if (!budget_left()) { stopped = true; return; }
        const auto b0 = run(mem, p);
        std::int64_t best_micro = 0;
        if (fits(b0, c.utilization_percent)) {
          keep(score(mem, p, b0), ch, choices);
          best_micro = M;
        } else {
          best_micro = keep_largest_divisor(mem, p, ch, sp, floor_micro, choices);
          if (sp.may_shrink_batch && budget_left()) keep_largest_batch(mem, p, ch, choices);
        }
        if (best_micro > 0 && n_fitting < fitting.size()) {
          fitting[n_fitting] = ch;
          fitting_micro[n_fitting] = best_micro;
          ++n_fitting;
        }
      });
    }
  }
};

template <std::size_t Capacity, class... Members>
constexpr planner<Capacity, Members...> make_planner(const training& base, const device& dev, const plan_constraints& c,
                                                     const Members&... members) {
  planner<Capacity, Members...> p{base, dev, c, family_view<Members...>{std::tuple<const Members&...>(members...)}};
  std::size_t k = 0;
  ((p.info[k++] = member_info{members.label, members.kind, members.lost_capacity_permille, {}, false, has_repeated_block(members.net.records)}), ...);
  if (c.max_remedies < 0) max_remedies_must_not_be_negative();
  if (c.utilization_percent <= 0 || c.utilization_percent > 100) percent_of_capacity_out_of_range();
  if (base.batch <= 0 || base.micro() <= 0) batch_must_be_positive();
  p.out.configured = p.score(0, base, p.run(0, base));
  return p;
}

}  // namespace detail

/// Plans over a family of models (`variant(...)` members; the first is the configured model).
template <std::size_t Capacity = 32, class... Members>
constexpr fit_plans<Capacity> plan_fit_family(const training& base, const device& dev, const plan_constraints& c,
                                              const Members&... members) {
  static_assert(sizeof...(Members) >= 1, "plan_fit_family needs at least the configured model");
  auto p = detail::make_planner<Capacity>(base, dev, c, members...);
  p.search();
  return p.out;
}

/// Plans for one model.
template <std::size_t Capacity = 32, std::size_t N>
constexpr fit_plans<Capacity> plan_fit(const model<N>& m, const training& base, const device& dev, const plan_constraints& c = {}) {
  return plan_fit_family<Capacity>(base, dev, c, variant("as configured", m));
}

/// The cheapest fitting plan (fits == false when none does).
template <std::size_t N>
constexpr fit_plan best_plan(const model<N>& m, const training& base, const device& dev, const plan_constraints& c = {}) {
  return plan_fit<8>(m, base, dev, c).best();
}

/// Scores a configuration you chose (e.g. the one a report settled on) with the planner's cost
/// model, against the configured one: member `member` of the family trained as `chosen`.
template <class... Members>
constexpr fit_plan score_plan(const training& base, const training& chosen, std::size_t member, const device& dev,
                              const plan_constraints& c, const Members&... members) {
  auto p = detail::make_planner<1>(base, dev, c, members...);
  p.need_flops = true;
  return p.score(member, chosen, p.run(member, chosen));
}
template <std::size_t N>
constexpr fit_plan score_plan(const model<N>& m, const training& base, const training& chosen, const device& dev,
                              const plan_constraints& c = {}) {
  return score_plan(base, chosen, 0, dev, c, variant("as configured", m));
}

/// The largest micro-batch in `bounds` that fits, with a distillation teacher whose no-grad
/// forward is re-simulated at every candidate micro-batch (max_micro_batch keeps the teacher's
/// forward peak fixed at the size it was computed for).
template <std::size_t N, std::size_t T>
constexpr std::int64_t max_micro_batch_distilled(const model<N>& student, const model<T>& teacher_model, bool offloaded,
                                                 training plan, const device& dev, batch_bounds bounds = {},
                                                 std::int64_t percent = 100) {
  if (bounds.min < 1 || bounds.max < bounds.min) detail::batch_bounds_out_of_order();
  auto fits_at = [&](std::int64_t mb) {
    training p = plan;
    p.batch = mb;
    p.micro_batch = 0;
    p.teacher = teacher(teacher_model, mb, offloaded, plan.precision);
    return fits(budget_totals(student, p, dev), percent);
  };
  if (!fits_at(bounds.min)) return 0;
  if (fits_at(bounds.max)) return bounds.max;
  std::int64_t lo = bounds.min, hi = bounds.max;
  while (hi - lo > 1) {
    const auto mid = lo + (hi - lo) / 2;
    (fits_at(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace gpubudget
