// gpubudget/budget_of.hpp — budget_totals for models and plans too large for one constant
// evaluation: the walk and the caching allocator model's replay spread over evaluations.
//
//   inline constexpr auto net = models::vit_l_16(224, 1000);
//   constexpr training plan{.batch = 32, .precision = precision_mode::amp_bf16, .model_allocator = true};
//   static_assert(fits(budget_totals_of<net, plan, devices::a100_80gb>()));
//
// Compilers bound the work of one constant evaluation (Clang 14: 1,048,576 steps). Two things pass
// it: a long model's walk (1,600 of issue I's attention and MLP layers), and the caching allocator
// model, which replays the step's every tensor event three times or more (a warm-up step and the
// steps until the cache settles, op_rules.md A12: ViT-L/16 needs 1.43 M steps in one evaluation).
// - The walk (split_walk): a model of more than walk_units_per_evaluation forward units walks
//   that many per evaluation, stopping between the root's children and
//   between backward's nodes. The simulator and the walker leave each evaluation as plain arrays
//   (carried_walk.hpp); the next one restores them and walks on.
// - The replay (split_run): storages_per_evaluation storages (or optimizer tensors) per
//   evaluation, each resuming where the one before stopped: the allocator's blocks
//   (caching_allocator::snapshot), the blocks the step's storages hold and where it stands
//   (step_replay::position), the optimizer step's progress, the cuDNN plans refused, carried as
//   plain arrays sized by the evaluation before, over the walk's tape (frozen_tape).
// The numbers are budget_totals's, to the byte (tests/static/budget_of_facts.cpp,
// tests/static/split_walk_facts.cpp, tests/unit/test_budget_of.cpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <gpubudget/budget.hpp>
#include <gpubudget/detail/carried_walk.hpp>

namespace gpubudget {
namespace detail {

/// The size of each of a tape's arrays (a frozen_tape's shape).
struct tape_extent {
  std::size_t storages = 0, temporaries = 0, base_weight_tensors = 0, parameter_tensors = 0, own_type_tensors = 0;
};

/// The walk's result before the replay, and its tape's extent.
struct walked_step {
  step_result step{};
  tape_extent extent{};
};

/// The size of each of the tape's arrays `s` logged.
constexpr tape_extent tape_extent_of(const sim& s) {
  return tape_extent{s.storages.size_, s.temporaries.size_, s.base_weight_tensors.size_, s.parameter_tensors.size_, s.own_type_tensors.size_};
}

/// A whole walk (one evaluation), its tape logged.
template <std::size_t N>
constexpr walked_step walk_for_replay(const model<N>& m, const training& plan) {
  sim s{};
  walked_step w{walk_step<N>(s, m.records, plan, nullptr, nullptr, nullptr, true), {}};
  w.extent = tape_extent_of(s);
  return w;
}

/// The extent of the tape a split walk's state holds, from the sizes it carries.
template <class State>
constexpr tape_extent tape_extent_of(const State& state) {
  const auto& n = state.sizes.sim;
  return tape_extent{n[sim_array_index<&sim::storages>()], n[sim_array_index<&sim::temporaries>()],
                     n[sim_array_index<&sim::base_weight_tensors>()], n[sim_array_index<&sim::parameter_tensors>()],
                     n[sim_array_index<&sim::own_type_tensors>()]};
}

/// The work one evaluation of a split walk does, in records walked forward (a repeat's block once
/// per copy walked) and nodes run backward (backward_nodes_per_unit a unit). Clang 14 bounds an
/// evaluation by 1,048,576 steps: with 1,000 units the dearest evaluation of issue I's mixed chain
/// of attention and MLP residuals takes 435 K at 1,600 layers and 613 K at 5,000, about half of it
/// copying the carried state in and out (at 600 units: 283 K and 472 K, but 52 s and 1.5 GB at
/// 5,000 layers, where 1,000 took 33 s and 1.1 GB: Clang keeps every evaluation's state).
/// GCC 12 allows 33,554,432 operations and keeps what every evaluation of a declaration allocated
/// until it ends, so fewer, larger evaluations cost it less (the mixed chain's budget at 5,000
/// layers: 66 s and 6.0 GB at 600 units, 32 s and 2.3 GB at 3,000, both with the tape then walked
/// twice; benchmarks/compile_time/README.md).
/// A model of up to that many forward units is walked in one evaluation, as budget_totals walks
/// it: what compiled before the walk was split costs what it did (the mixed chain at 800 layers,
/// ~970 units: 599 K steps and 2.6 s whole on Clang, 7.6 s split at 600 units).
#if defined(__clang__)
inline constexpr std::int64_t walk_units_per_evaluation = 1000;
#else
inline constexpr std::int64_t walk_units_per_evaluation = 3000;
#endif

/// Backward nodes a split walk runs for one walk unit. A leaf's forward records about two nodes,
/// and a node's backward costs fewer steps than a record's forward: with two nodes a unit the
/// dearest evaluation of issue I's 5,000-layer chain is still a forward one (613,281 Clang steps)
/// and the walk takes 12 evaluations, not 18 (Clang's memory 1,074 → 810 MB); with four, a
/// backward one of 4,000 nodes becomes the dearest (744,765 steps: under 30 % to spare).
inline constexpr std::int64_t backward_nodes_per_unit = 2;

/// A sequence below the root that a split walk went into (walker::runs_child_by_child), to stop
/// between its children too: an exported model nests nearly all of itself in one (torchvision's
/// `features`, a ResNet's `layer3`). Where its children end, and the caller's reference to its
/// input, released after them (walker::run_child).
struct open_sequence {
  std::int32_t end = 0;
  value input{};
};
/// How deep a split walk goes into nested sequences (deeper ones run whole).
inline constexpr std::int32_t max_open_sequences = 8;

/// Where a split walk stands: the micro-batch pass, forward or backward, the next record
/// (forward: a child of the root or of an open sequence) or the next node (backward), the
/// trainer's output and loss, the step's result.
struct walk_progress {
  int pass = 0;
  bool in_backward = false, done = false;
  std::int32_t next = 1;
  value out{}, loss{};  ///< forward: `out` is the value the next record runs on
  std::array<open_sequence, max_open_sequences> open{};
  std::int32_t depth = 0;  ///< open sequences
  step_result result{};
};

/// What record `i` costs a walk, in walk units: the records it runs, a repeat's block once per
/// copy walked (every copy with the allocator log, else at most three: walker::walk_repeat).
constexpr std::int64_t walk_units(const layer* records, std::int32_t i, bool log_allocator) {
  const layer& L = records[i];
  if (L.span == 1) return 1;
  std::int64_t inner = 0;
  for (std::int32_t c = i + 1; c < i + L.span; c += records[c].span) inner += walk_units(records, c, log_allocator);
  if (L.kind != node_kind::repeat) return 1 + inner;
  return 1 + inner * (log_allocator || L.count < 3 ? L.count : 3);
}

/// The forward's walk units: the root's children (a split walk stops between them, and between
/// the children of the sequences nested in them).
template <std::size_t N>
constexpr std::int64_t forward_units(const model<N>& m, const training& plan) {
  const bool log = replays_allocator(plan);
  const layer* records = m.records.data();
  if (records[0].kind != node_kind::sequence) return walk_units(records, 0, log);
  std::int64_t units = 0;
  for (std::int32_t c = 1; c < records[0].span; c += records[c].span) units += walk_units(records, c, log);
  return units;
}

/// Is `m`'s walk under `plan` one evaluation (split_walk::whole)?
template <std::size_t N>
constexpr bool walks_whole(const model<N>& m, const training& plan, std::int64_t units = walk_units_per_evaluation) {
  return forward_units(m, plan) <= units;
}

/// The forward of the pass under way from `p` on, within `units`: record by record when the root
/// allows it (walker::runs_child_by_child), going into a nested sequence that would not fit the
/// units left, else whole. Says whether it ended.
constexpr bool advance_forward(walker& w, walk_progress& p, std::int64_t& units) {
  if (!w.runs_child_by_child(0)) {
    p.out = w.walk(0, value{}, w.root_scope());
    return true;
  }
  const bool log = w.s.log_allocator;
  for (;;) {
    if (p.depth > 0 && p.next >= p.open[static_cast<std::size_t>(p.depth - 1)].end) {  // an open sequence's children ran
      w.s.release(p.open[static_cast<std::size_t>(--p.depth)].input);
      continue;
    }
    if (p.next >= w.records[0].span || units <= 0) return p.next >= w.records[0].span;
    const bool force = p.depth == 0 && w.checkpoints_children(0, false);  // checkpoint_all: the root's children
    const auto cost = walk_units(w.records, p.next, log);
    if (cost > units && !force && p.depth < max_open_sequences && w.runs_child_by_child(p.next)) {
      w.s.retain(p.out.id);  // run_children's own reference, which its first child consumes
      p.open[static_cast<std::size_t>(p.depth++)] = {p.next + w.records[p.next].span, p.out};
      ++p.next, --units;
      continue;
    }
    units -= cost;
    p.out = w.run_child(p.next, p.out, w.root_scope(), force);
    p.next += w.records[p.next].span;
  }
}

/// The step from `p` on for about `units` walk units (run_micro_batches's passes, resumable
/// between the root's children and between backward's nodes, backward_nodes_per_unit a unit).
constexpr void advance_walk(walker& w, sim& s, const training& plan, walk_progress& p, std::int64_t units) {
  while (!p.done && units > 0) {
    if (!p.in_backward) {
      if (!advance_forward(w, p, units)) return;
      p.loss = finish_forward(s, w, plan, p.pass, p.out, p.result);
      p.in_backward = !plan.inference;
      if (p.in_backward) p.next = w.begin_backward(p.loss.id);
    }
    std::int64_t nodes = units * backward_nodes_per_unit;
    for (; p.in_backward && p.next >= w.first_node_of_pass && nodes > 0; --p.next, --nodes) w.backward_node(p.next);
    units = nodes / backward_nodes_per_unit;
    if (p.in_backward && p.next >= w.first_node_of_pass) return;
    if (p.in_backward) w.end_backward(), finish_backward(s, w, p.out, p.loss, p.result);
    if (++p.pass < walked_passes(plan)) {
      w.next_micro_batch(), p.in_backward = false, p.next = 1, p.out = value{}, p.loss = value{};
      continue;
    }
    fill_step_peak(p.result, s);
    p.result.allocator.reserved_peak = -1;
    p.done = true;
  }
}

/// No state before the first evaluation of a split walk.
struct walk_start {};

/// One evaluation of a split walk: the simulator and walker as `prev` left them (or new), the step
/// advanced by `units`, then `finish(s, w, progress)` (the extent it leaves, or that state
/// itself). `traced`: the walk records max_micro_batch's trace (and logs nothing for a replay).
template <std::size_t N, class Prev, class Finish>
constexpr auto walk_evaluation(const model<N>& m, const training& plan, bool traced, std::int64_t units, const Prev& prev, Finish finish) {
  sim s{};
  configure_sim(s, N, plan, traced, nullptr, !traced);
  walker w(m.records.data(), static_cast<std::int32_t>(N), s, false);
  walk_progress p{};
  if constexpr (std::is_same_v<Prev, walk_start>) check_step_inputs(m.records, plan);
  else prev.restore(s, w), p = prev.progress;
  advance_walk(w, s, plan, p, units);
  return finish(s, w, p);
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
  std::array<std::int32_t, E.storages + 2> free_begin{};  ///< sort_frees, done once here
  std::array<std::int32_t, E.storages> freed{};

  constexpr replay_tape view() const {
    return replay_tape{{storages.data(), E.storages},
                       {temporaries.data(), E.temporaries},
                       {base_weight_tensors.data(), E.base_weight_tensors},
                       {parameter_tensors.data(), E.parameter_tensors},
                       {own_type_tensors.data(), E.own_type_tensors},
                       first_cublas_at,
                       backward_starts_at,
                       parameter_type,
                       {free_begin.data(), E.storages + 2},
                       {freed.data(), E.storages}};
  }
};

/// Copies `from` into the front of `to`; returns how many.
template <class T, std::size_t K>
constexpr std::size_t copy_span(std::array<T, K>& to, tape_span<T> from) {
  copy_elements(to.data(), from.data_, from.size_);
  return from.size_;
}

/// The tape `s` logged, in plain arrays.
template <tape_extent E>
constexpr frozen_tape<E> frozen_tape_of(const sim& s) {
  dyn_array<tape_storage> storages{};
  const auto t = tape_of(s, storages);
  frozen_tape<E> f{};
  copy_span(f.storages, t.storages), copy_span(f.temporaries, t.temporaries);
  copy_span(f.base_weight_tensors, t.base_weight_tensors), copy_span(f.parameter_tensors, t.parameter_tensors);
  copy_span(f.own_type_tensors, t.own_type_tensors);
  f.first_cublas_at = t.first_cublas_at, f.backward_starts_at = t.backward_starts_at, f.parameter_type = t.parameter_type;
  sort_frees({f.storages.data(), E.storages}, f.free_begin.data(), f.freed.data());
  return f;
}

/// The walk again, its tape kept (walk_for_replay gave its extent).
template <tape_extent E, std::size_t N>
constexpr frozen_tape<E> freeze_tape(const model<N>& m, const training& plan) {
  sim s{};
  (void)walk_step<N>(s, m.records, plan, nullptr, nullptr, nullptr, true);
  return frozen_tape_of<E>(s);
}

/// The tape a split walk's last state holds.
template <tape_extent E, class State>
constexpr frozen_tape<E> freeze_tape(const State& last) {
  sim s{};
  last.restore(s);
  return frozen_tape_of<E>(s);
}

/// The work one evaluation of a split replay does, in storages (an optimizer step's tensor
/// counts as one): at ~330 Clang steps a storage (ViT-L/16's warm-up step), about a third of
/// Clang's default limit. Fewer evaluations cost GCC less (ViT-L/16: 6.7 s at 1024, 7.2 s at 512).
inline constexpr std::size_t storages_per_evaluation = 1024;

/// Where a split replay stands: the step being replayed (or next), whether it is under way, in its
/// storages or in its optimizer step (and how far), what its end compares with, the result so
/// far, whether the run is over.
struct replay_progress {
  pass_start start{};
  replay_result result{};
  int pass = 0;
  bool in_pass = false, in_optimizer = false;
  std::size_t optimizer_next = 0;
  bool stopped = false;  ///< finish_pass said so, or model.to ran out of memory
};

/// A split replay between two evaluations: the allocator, cuDNN's refused plans, the block each
/// storage of the step under way holds and where the step stands, the foreach optimizer's
/// temporaries held.
template <std::size_t Cap, tape_extent E>
struct replay_state {
  caching_allocator::snapshot<Cap> allocator{};
  std::array<std::int64_t, E.temporaries / 2> refused{};  ///< a pair per optional workspace at most
  std::size_t refused_count = 0;
  std::array<std::int32_t, E.storages> handles{};
  step_replay::position position{};
  std::array<std::int32_t, 2 * (E.parameter_tensors + E.own_type_tensors)> optimizer_held{};  ///< two temporaries a tensor at most
  std::size_t optimizer_held_count = 0;
  replay_progress progress{};
};

template <std::size_t Cap, tape_extent E>
constexpr replay_state<Cap, E> save_replay(const caching_allocator& a, const step_replay& steps, tape_span<std::int32_t> optimizer_held,
                                           const replay_progress& p) {
  replay_state<Cap, E> out{};
  a.save_into(out.allocator);
  out.refused_count = copy_span(out.refused, steps.refused());
  copy_span(out.handles, steps.handles());
  out.optimizer_held_count = copy_span(out.optimizer_held, optimizer_held);
  out.position = steps.where(), out.progress = p;
  return out;
}

/// The optimizer step of the step under way, from where it stands, within `budget` units; the
/// step finished when it is done.
template <std::size_t Cap, tape_extent E>
constexpr replay_state<Cap, E> replay_optimizer_chunk(caching_allocator& a, step_replay& steps, const replay_tape& t, const training& plan, bool past_oom,
                                                      replay_progress p, tape_span<std::int32_t> held, std::size_t budget) {
  optimizer_step o(a, t, p.pass == 0, optimizer_replay_settings(plan));
  o.resume(p.optimizer_next, held);
  o.run_until(p.optimizer_next + budget);
  p.optimizer_next = o.next();
  if (o.done()) p.stopped = finish_pass(a, steps, plan, p.pass, past_oom, p.start, p.result), p.in_pass = p.in_optimizer = false, ++p.pass;
  return save_replay<Cap, E>(a, steps, o.done() ? tape_span<std::int32_t>{} : o.held(), p);
}

/// Up to storages_per_evaluation units of the replay: a step begun, its storages, its optimizer
/// step, its end; then where it stands.
template <std::size_t Cap, tape_extent E>
constexpr replay_state<Cap, E> replay_chunk(caching_allocator& a, step_replay& steps, const replay_tape& t, const training& plan, bool past_oom,
                                            replay_progress p, tape_span<std::int32_t> held, std::size_t budget = storages_per_evaluation) {
  if (!p.in_pass) p.start = begin_pass(a, p.pass), steps.restart(), p.in_pass = true;
  if (!p.in_optimizer) {
    const auto from = steps.where().storage, end = t.storages.size_ + 1, to = from + budget;
    steps.run_until(p.pass == 0, to < end ? to : end);
    budget -= steps.where().storage - from;
    if (!steps.step_done()) return save_replay<Cap, E>(a, steps, {}, p);
    note_backward_done(a, steps, p.start, p.result);
    p.in_optimizer = true, p.optimizer_next = 0;
  }
  return replay_optimizer_chunk<Cap, E>(a, steps, t, plan, past_oom, p, held, budget);
}

/// At most how many requests the evaluation after `p` makes (each adds at most two allocator
/// blocks: a new segment's and a split's remainder): its storages and the op temporaries before
/// them (four blocks or two tries each), cuBLAS's two workspaces, and two per optimizer unit
/// left of its budget; the first one also model.to's resident tensors and the batch.
constexpr std::size_t requests_after(const replay_tape& t, const step_replay::position& pos, const replay_progress& p, bool first) {
  const auto trained = t.parameter_tensors.size_ + t.own_type_tensors.size_;
  std::size_t n = 2 + 2 * (storages_per_evaluation < 2 * trained ? storages_per_evaluation : 2 * trained);
  if (first) n += t.base_weight_tensors.size_ + t.parameter_tensors.size_ + t.own_type_tensors.size_ + 2;
  if (p.in_optimizer) return n;
  const std::size_t from = p.in_pass ? pos.storage : 0, to = from + storages_per_evaluation;
  for (std::size_t k = from; k < to && k < t.storages.size_; ++k) n += t.storages.data_[k].request > 0 ? 1 : 0;
  for (std::size_t w = 0; w + 3 < t.temporaries.size_; w += 4)
    if (const auto at = static_cast<std::size_t>(t.temporaries.data_[w]); at >= from && at <= to) n += 4;
  return n;
}

/// The first evaluation: model.to, then the warm-up step's first storages (replay_run's start).
template <std::size_t Cap, tape_extent E>
constexpr replay_state<Cap, E> replay_first(const replay_tape& t, const training& plan, const replay_setup& setup, std::int64_t cap, bool past_oom) {
  caching_allocator a(plan.allocator, cap);
  if (!replay_model_to(a, t, setup, past_oom)) {
    replay_state<Cap, E> out{};
    out.progress.result.reserved_peak = a.reserved_peak(), out.progress.result.out_of_memory = true, out.progress.stopped = true;
    return out;
  }
  step_replay steps(t, a, setup);
  // model.to's tensors count against the evaluation's work: a long model's (issue I's 5,000-layer
  // chain: ~9,000 blocks) leave no room for the warm-up step's storages in the same evaluation
  const auto resident = t.base_weight_tensors.size_ + t.parameter_tensors.size_ + t.own_type_tensors.size_;
  return replay_chunk<Cap, E>(a, steps, t, plan, past_oom, replay_progress{}, {},
                              resident < storages_per_evaluation ? storages_per_evaluation - resident : 0);
}

/// A later evaluation: the allocator and the step where `prev` left them, then its next units.
template <std::size_t Cap, tape_extent E, class State>
constexpr replay_state<Cap, E> replay_next(const replay_tape& t, const training& plan, const replay_setup& setup, bool past_oom, const State& prev) {
  caching_allocator a(plan.allocator, prev.allocator);
  step_replay steps(t, a, setup);
  steps.restore_refused({prev.refused.data(), prev.refused_count});
  steps.resume(prev.position, {prev.handles.data(), E.storages});
  return replay_chunk<Cap, E>(a, steps, t, plan, past_oom, prev.progress, {prev.optimizer_held.data(), prev.optimizer_held_count});
}

/// The walk of a budget over constant evaluations of `Units` walk units each. Evaluation K leaves
/// its state in arrays with room for what the evaluation before it grew them by, twice over
/// (`guessed<K>`, room_after); where they do not fit, it runs twice: once for the sizes it
/// leaves (`extent<K>`), once to leave that state (`measured<K>`), as the first one always does.
/// The last state holds the step's result (`walked`) and the allocator's tape. A model of no
/// more than `Units` forward units is walked whole (`whole`), once for its
/// result and, for a replay, again for its tape. `Traced`: max_micro_batch's traced step (its
/// trace in the last state; no replay).
template <const auto& Model, training Plan, bool Traced = false, std::int64_t Units = walk_units_per_evaluation>
struct split_walk {
  static constexpr training plan = Plan;
  static constexpr bool whole = walks_whole(Model, Plan, Units);
  static constexpr walk_start start{};

  template <int K>
  static constexpr const auto& before() {
    if constexpr (K == 0) return start;
    else return after<K - 1>();
  }
  template <int K>
  static constexpr walk_extent sizes_before() {
    if constexpr (K == 0) return walk_extent{};
    else return after<K - 1>().sizes;
  }
  /// Evaluation K, its state saved in arrays of `Capacity`.
  template <int K, walk_extent Capacity>
  static constexpr auto evaluate() {
    return walk_evaluation(Model, Plan, Traced, Units, before<K>(), [](const sim& s, const walker& w, const walk_progress& p) {
      carried_walk<Capacity, walk_progress> out{};
      out.save(s, w, p, sizes_before<K>());
      return out;
    });
  }
  template <int K>
  static constexpr walk_extent extent = walk_evaluation(Model, Plan, Traced, Units, before<K>(),
                                                        [](const sim& s, const walker& w, const walk_progress&) { return extent_of(s, w); });
  template <int K>
  static constexpr auto measured = evaluate<K, extent<K>>();
  template <int K>
  static constexpr auto guessed = evaluate<K, room_after(before<K>().sizes, before<K>().growth)>();

  template <int K>
  static constexpr const auto& after() {
    if constexpr (K == 0) return measured<0>;
    else if constexpr (!guessed<K>.overflowed) return guessed<K>;
    else return measured<K>;
  }
  template <int K>
  static constexpr const auto& last_from() {
    if constexpr (after<K>().progress.done) return after<K>();
    else return last_from<K + 1>();
  }
  /// The last state of a walk that is not whole.
  static constexpr const auto& last() { return last_from<0>(); }

  /// Of a walk that is not whole: its evaluations, and of those after the first the ones whose
  /// guessed room overflowed (run twice).
  template <int K = 0>
  static constexpr int evaluations() {
    if constexpr (after<K>().progress.done) return K + 1;
    else return evaluations<K + 1>();
  }
  template <int K = 1>
  static constexpr int remeasured() {
    if constexpr (K >= evaluations()) return 0;
    else return (guessed<K>.overflowed ? 1 : 0) + remeasured<K + 1>();
  }

  static constexpr walked_step walk() {
    if constexpr (whole) return walk_for_replay(Model, Plan);
    else return walked_step{last().progress.result, tape_extent_of(last())};
  }
  static constexpr walked_step walked = walk();
  static constexpr frozen_tape<walked.extent> freeze() {
    if constexpr (whole) return freeze_tape<walked.extent>(Model, Plan);
    else return freeze_tape<walked.extent>(last());
  }
  /// The tape (a template: GCC evaluates a class template's static constexpr members with it,
  /// and a budget without the allocator model reads no tape).
  template <int = 0>
  static constexpr auto tape = freeze();
};

/// replay_run over a split_walk, one constant evaluation per storages_per_evaluation storages of
/// a step (`after<k>`: the state after evaluation k); its cuDNN refusals are at most the tape's
/// temporaries (a pair per optional one).
template <class Walk, replay_setup Setup, std::int64_t Cap, bool PastOom>
struct split_run {
  static constexpr tape_extent extent = Walk::walked.extent;

  template <int K>
  static constexpr auto evaluate() {
    if constexpr (K == 0) {
      return replay_first<2 * requests_after(Walk::template tape<>.view(), {}, {}, true), extent>(Walk::template tape<>.view(), Walk::plan, Setup, Cap, PastOom);
    } else {
      constexpr auto& prev = after<K - 1>;
      constexpr auto blocks = prev.allocator.block_count + 2 * requests_after(Walk::template tape<>.view(), prev.position, prev.progress, false);
      return replay_next<blocks, extent>(Walk::template tape<>.view(), Walk::plan, Setup, PastOom, prev);
    }
  }
  template <int K>
  static constexpr auto after = evaluate<K>();

  template <int K>
  static constexpr replay_result result_from() {
    if constexpr (after<K>.progress.stopped) return after<K>.progress.result;
    else return result_from<K + 1>();
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
/// `Percent` of Dev's capacity. Which runs are replayed is replay_allocator's choice, made here on
/// constants: the capped run alone for a probe; else uncapped, and capped when that passes the cap.
template <const auto& Model, training Plan, const device& Dev, std::int64_t Percent, bool FitsOnly,
          std::int64_t Units = walk_units_per_evaluation>
constexpr memory_budget split_totals() {
  using walk = split_walk<Model, Plan, false, Units>;
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

/// budget_totals(Model, Plan, Dev) for static_asserts on large models, and on any model with the
/// caching allocator model (training::model_allocator): the same numbers, with the walk (for a
/// model of more than walk_units_per_evaluation forward units) and each 1,024 storages of the
/// replay in constant evaluations of their own, so that no one of them meets the compiler's limit
/// (Clang 14: 1,048,576 steps; ViT-L/16's budget with the allocator model needs 1.43 M in one,
/// 0.35 M for the dearest split; 1,600 attention and MLP layers' walk ~0.44 M). What the split
/// costs: each evaluation of the walk restores the state the one before left, and the replay needs
/// the walk's tape kept (benchmarks/compile_time/README.md). A model walked whole without the
/// allocator model is budget_totals in one evaluation.
///
/// `Model` must be a constexpr variable with static storage (namespace scope, or a static
/// member); `Plan` is a value.
template <const auto& Model, training Plan, const device& Dev>
constexpr memory_budget budget_totals_of() {
  detail::check_divides(Plan);
  return detail::split_totals<Model, Plan, Dev, 100, false>();
}

}  // namespace gpubudget
