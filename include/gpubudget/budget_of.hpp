// gpubudget/budget_of.hpp — budget_totals with the caching allocator model, one constant
// evaluation per replayed training step.
//
//   inline constexpr auto net = models::vit_l_16(224, 1000);
//   constexpr training plan{.batch = 32, .precision = precision_mode::amp_bf16, .model_allocator = true};
//   static_assert(fits(budget_totals_of<net, plan, devices::a100_80gb>()));
//
// Compilers bound the work of one constant evaluation (Clang 14: 1,048,576 steps), and the caching
// allocator model replays the step's every tensor event three times or more (a warm-up step and
// the steps until the cache settles, op_rules.md A12): ViT-L/16 with the model needs 1.43 M
// steps in one evaluation. Here the walk and each replayed step are evaluations of their own.
// The allocator's state (its blocks, caching_allocator::snapshot) and the walk's storages and
// temporaries (frozen_tape) are carried from one to the next as constexpr values of plain arrays,
// sized by the evaluation before. The numbers are budget_totals's, to the byte
// (tests/static/budget_of_facts.cpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include <gpubudget/budget.hpp>

namespace gpubudget {
namespace detail {

/// The size of each of a tape's arrays (a frozen_tape's shape), and a bound on the allocator
/// block slots one replayed step adds: every request adds at most two (a new segment's block and
/// a split's remainder) and a step requests each storage once, each op temporary at most four
/// blocks or two tries, cuBLAS two workspaces, the optimizer at most four tensors per trainable
/// one (state on the first step, temporaries), model.to each resident tensor once.
struct tape_extent {
  std::size_t storages = 0, temporaries = 0, base_weight_tensors = 0, parameter_tensors = 0, own_type_tensors = 0;
  std::size_t blocks_per_step = 0;
};

constexpr tape_extent extent_of(const sim& s) {
  tape_extent e{s.storages.size_, s.temporaries.size_, s.base_weight_tensors.size_, s.parameter_tensors.size_, s.own_type_tensors.size_, 0};
  const auto requests = e.storages + e.temporaries + 5 * (e.parameter_tensors + e.own_type_tensors) + e.base_weight_tensors + 4;
  e.blocks_per_step = 2 * requests;
  return e;
}

/// The walk's result before the replay, and its tape's extent.
struct walked_step {
  step_result step{};
  tape_extent extent{};
};

template <std::size_t N>
constexpr walked_step walk_for_replay(const model<N>& m, const training& plan) {
  sim s{};
  walked_step w{walk_step<N>(s, m.records, plan, nullptr, nullptr, nullptr, true), {}};
  w.extent = extent_of(s);
  return w;
}

/// A replay_tape in plain arrays: a constexpr value that later evaluations read.
template <tape_extent E>
struct frozen_tape {
  std::array<tape_storage, E.storages> storages{};
  std::array<std::int64_t, E.temporaries> temporaries{};
  std::array<std::int64_t, E.base_weight_tensors> base_weight_tensors{};
  std::array<std::int64_t, E.parameter_tensors> parameter_tensors{};
  std::array<std::int64_t, E.own_type_tensors> own_type_tensors{};
  std::int32_t first_cublas_at = -1, backward_starts_at = -1;
  dtype parameter_type = dtype::fp32;

  constexpr replay_tape view() const {
    return replay_tape{{storages.data(), E.storages},
                       {temporaries.data(), E.temporaries},
                       {base_weight_tensors.data(), E.base_weight_tensors},
                       {parameter_tensors.data(), E.parameter_tensors},
                       {own_type_tensors.data(), E.own_type_tensors},
                       first_cublas_at,
                       backward_starts_at,
                       parameter_type};
  }
};

template <class T, std::size_t K>
constexpr void copy_into(std::array<T, K>& to, tape_span<T> from) {
  for (std::size_t k = 0; k < K; ++k) to[k] = from.data_[k];
}

/// The walk again, its tape kept (walk_for_replay gave its extent).
template <tape_extent E, std::size_t N>
constexpr frozen_tape<E> freeze_tape(const model<N>& m, const training& plan) {
  sim s{};
  (void)walk_step<N>(s, m.records, plan, nullptr, nullptr, nullptr, true);
  dyn_array<tape_storage> storages{};
  const auto t = tape_of(s, storages);
  frozen_tape<E> f{};
  copy_into(f.storages, t.storages), copy_into(f.temporaries, t.temporaries);
  copy_into(f.base_weight_tensors, t.base_weight_tensors), copy_into(f.parameter_tensors, t.parameter_tensors);
  copy_into(f.own_type_tensors, t.own_type_tensors);
  f.first_cublas_at = t.first_cublas_at, f.backward_starts_at = t.backward_starts_at, f.parameter_type = t.parameter_type;
  return f;
}

/// A split replay after some steps: the allocator, cuDNN's refused plans, the result so far.
template <std::size_t Cap, std::size_t Refusals>
struct replay_state {
  caching_allocator::snapshot<Cap> allocator{};
  std::array<std::int64_t, Refusals> refused{};
  std::size_t refused_count = 0;
  replay_result result{};
  int passes = 0;      ///< steps replayed
  bool stopped = false;  ///< the run is over (replay_pass said so, or model.to ran out of memory)
};

/// Replays step `pass` on `a` and saves where the run stands.
template <std::size_t Cap, std::size_t Refusals>
constexpr replay_state<Cap, Refusals> replay_and_save(caching_allocator& a, const replay_tape& t, const training& plan, const replay_setup& setup,
                                                      bool past_oom, int pass, tape_span<std::int64_t> refused, replay_result r) {
  replay_state<Cap, Refusals> out{};
  step_replay steps(t, a, setup);
  steps.restore_refused(refused);
  out.stopped = replay_pass(a, steps, t, plan, pass, past_oom, r);
  out.result = r, out.passes = pass + 1;
  out.allocator = a.template save<Cap>();
  const auto now = steps.refused();
  for (std::size_t k = 0; k < now.size_; ++k) out.refused[k] = now.data_[k];
  out.refused_count = now.size_;
  return out;
}

/// The first evaluation: model.to, then the warm-up step (replay_run's start).
template <std::size_t Cap, std::size_t Refusals>
constexpr replay_state<Cap, Refusals> replay_first_step(const replay_tape& t, const training& plan, const replay_setup& setup, std::int64_t cap,
                                                        bool past_oom) {
  caching_allocator a(plan.allocator, cap);
  if (past_oom) a.lift_cap_after_oom();
  replay_model_to(a, t, setup);
  if (!past_oom && a.out_of_memory()) {
    replay_state<Cap, Refusals> out{};
    out.result.reserved_peak = a.reserved_peak(), out.result.out_of_memory = true, out.stopped = true;
    return out;
  }
  return replay_and_save<Cap, Refusals>(a, t, plan, setup, past_oom, 0, {}, replay_result{});
}

/// A later evaluation: the allocator `prev` left, then the next step.
template <std::size_t Cap, std::size_t Refusals, class State>
constexpr replay_state<Cap, Refusals> replay_next_step(const replay_tape& t, const training& plan, const replay_setup& setup, bool past_oom,
                                                       const State& prev) {
  const State local = prev;  // GCC reads a static constexpr aggregate's element by copying the whole of it: copy once
  caching_allocator a(plan.allocator, local.allocator);
  return replay_and_save<Cap, Refusals>(a, t, plan, setup, past_oom, local.passes, {local.refused.data(), local.refused_count}, local.result);
}

/// The walk of a split budget, evaluated twice (its extent, then its tape): each its own
/// constant evaluation.
template <const auto& Model, training Plan>
struct split_walk {
  static constexpr training plan = Plan;
  static constexpr walked_step walked = walk_for_replay(Model, Plan);
  static constexpr auto tape = freeze_tape<walked.extent>(Model, Plan);
};

/// replay_run over a split_walk, one constant evaluation per step (`after<k>`: the state after
/// step k); its cuDNN refusals are at most the tape's temporaries (a pair per optional one).
template <class Walk, replay_setup Setup, std::int64_t Cap, bool PastOom>
struct split_run {
  static constexpr std::size_t per_step = Walk::walked.extent.blocks_per_step;
  static constexpr std::size_t refusals = Walk::walked.extent.temporaries / 2;

  template <int Pass>
  static constexpr auto step() {
    if constexpr (Pass == 0) {
      return replay_first_step<per_step, refusals>(Walk::tape.view(), Walk::plan, Setup, Cap, PastOom);
    } else {
      constexpr auto& prev = after<Pass - 1>;
      return replay_next_step<prev.allocator.block_count + per_step, refusals>(Walk::tape.view(), Walk::plan, Setup, PastOom, prev);
    }
  }
  template <int Pass>
  static constexpr auto after = step<Pass>();

  template <int Pass>
  static constexpr replay_result result_from() {
    if constexpr (after<Pass>.stopped) return after<Pass>.result;
    else return result_from<Pass + 1>();
  }
};

/// `dev` with `percent` of its capacity (max_micro_batch's percent_of_capacity).
constexpr device at_percent(const device& dev, std::int64_t percent) {
  device d = dev;
  d.capacity = checked_mul(dev.capacity, percent) / 100;
  return d;
}

/// The replay's setup on `dev` after the walk `step`.
constexpr replay_setup split_setup(const device& dev, const step_result& step, bool fits_only) {
  auto s = replay_setup_with(replay_setup_for(dev), step);
  s.fits_only = fits_only;
  return s;
}

/// totals_any_micro_batch with the replay split (`fits_only`: the batch search's probe), on
/// `Percent` of Dev's capacity.
template <const auto& Model, training Plan, const device& Dev, std::int64_t Percent, bool FitsOnly>
constexpr memory_budget split_totals() {
  using walk = split_walk<Model, Plan>;
  constexpr device dev = at_percent(Dev, Percent);
  auto step = walk::walked.step;
  if constexpr (replays_allocator(Plan)) {
    constexpr auto setup = split_setup(dev, walk::walked.step, FitsOnly);
    if constexpr (FitsOnly && setup.cap > 0) {
      step.allocator = split_run<walk, setup, setup.cap, true>::template result_from<0>();
    } else {
      constexpr auto uncapped = split_run<walk, setup, 0, false>::template result_from<0>();
      step.allocator = uncapped;
      if constexpr (setup.cap > 0 && uncapped.reserved_peak > setup.cap)
        step.allocator.out_of_memory = split_run<walk, setup, setup.cap, false>::template result_from<0>().out_of_memory;
    }
  }
  memory_budget b{};
  fill_budget(b, step, Plan, dev);
  return b;
}

}  // namespace detail

/// budget_totals(Model, Plan, Dev) for static_asserts on large models with the caching allocator
/// model (training::model_allocator): the same numbers, with the walk and each replayed training
/// step in a constant evaluation of its own, so that no one of them meets the compiler's limit
/// (Clang 14: 1,048,576 steps; ViT-L/16's budget with the allocator model needs 1.43 M in one).
/// Without the allocator model it is budget_totals in one evaluation.
///
/// `Model` must be a constexpr variable with static storage (namespace scope, or a static
/// member); `Plan` is a value.
template <const auto& Model, training Plan, const device& Dev>
constexpr memory_budget budget_totals_of() {
  detail::check_divides(Plan);
  return detail::split_totals<Model, Plan, Dev, 100, false>();
}

}  // namespace gpubudget
