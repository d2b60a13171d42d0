// gpubudget/timeline.hpp — live tensor bytes at every moment of one training step.
//
//   const auto t = timeline(model, training{.batch = 8}, devices::t4);
//   t.points[t.peak_index()].total() == t.budget.peak_tensor_bytes()   // always
//
// The budget keeps only the step's peak; a timeline keeps every moment of the same liveness
// walk (each allocation, each op's temporaries, forward then backward, then optimizer.step()),
// split by what holds the bytes. It is a separate, opt-in evaluation: the walk runs again with a
// recorder attached, so budget() costs not one evaluation step more for it. svg.hpp draws it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include <gpubudget/budget.hpp>

namespace gpubudget {

/// Where in the step a moment lies, in the order the step runs them.
enum class step_phase : std::uint8_t {
  teacher_forward,  ///< a distillation teacher's no-grad forward, before the student's
  forward,          ///< the student's forward and the loss
  backward,         ///< backward (checkpointed blocks' re-runs included)
  optimizer_step,   ///< optimizer.step(): the .grad tensors and the step's temporaries
};

/// Live tensor bytes at one moment, by what holds them. The categories add up to total().
struct timeline_point {
  /// Weights, buffers, the fp32 master copy, an EMA copy, a teacher on the GPU: resident.
  std::int64_t parameters = 0;
  std::int64_t optimizer_state = 0;    ///< resident
  std::int64_t gradients = 0;          ///< .grad of trainable parameters
  std::int64_t saved_activations = 0;  ///< tensors autograd keeps for backward
  /// The input batch, outputs nothing saves, incoming gradients, an op's (or the optimizer's)
  /// temporaries.
  std::int64_t other = 0;
  std::int32_t record = -1;  ///< model record being run (-1: the teacher, optimizer.step())
  step_phase phase = step_phase::forward;
  /// 0: the first micro-batch; 1: the second, which stands for every later one (gradient
  /// accumulation: each starts with every .grad alive).
  std::int32_t micro_batch = 0;

  constexpr std::int64_t total() const {
    return checked_add(checked_add(checked_add(parameters, optimizer_state), checked_add(gradients, saved_activations)), other);
  }
};

/// One step's moments and the budget of the same configuration.
struct memory_timeline {
  memory_budget budget{};
  std::vector<layer> records{};          ///< the model's records (timeline_point::record indexes them)
  std::vector<timeline_point> points{};  ///< in the order the step runs

  /// The moment of the budget's peak: the first highest moment of forward and backward, unless
  /// optimizer.step() or the teacher's forward goes higher (budget.hpp's order of precedence).
  constexpr std::size_t peak_index() const {
    std::size_t best = points.size();
    for (std::size_t k = 0; k < points.size(); ++k)
      if (points[k].phase != step_phase::teacher_forward && (best == points.size() || points[k].total() > points[best].total())) best = k;
    for (std::size_t k = 0; k < points.size(); ++k)
      if (points[k].phase == step_phase::teacher_forward && (best == points.size() || points[k].total() > points[best].total())) best = k;
    return best;
  }
};

namespace detail {

/// A point holding the resident state of `b` plus `gradients`, `saved` and `other` bytes.
constexpr timeline_point resident_point(const memory_budget& b, std::int64_t gradients, std::int64_t saved, std::int64_t other) {
  timeline_point p{};
  p.parameters = checked_add(checked_add(checked_add(b.parameters, b.buffers), checked_add(b.master_weights, b.ema)), b.teacher);
  p.optimizer_state = b.optimizer_state;
  p.gradients = gradients;
  p.saved_activations = saved;
  p.other = checked_add(b.input_batch, other);
  return p;
}

/// The moments of the walk as points: forward and backward of each simulated micro-batch.
constexpr void add_walk_points(memory_timeline& t, const moment_recorder& rec) {
  std::int32_t micro = 0;
  bool was_backward = false;
  for (const auto& m : rec.moments) {
    if (was_backward && !m.in_backward) ++micro;  // backward ended: the next micro-batch's forward
    was_backward = m.in_backward;
    auto p = resident_point(t.budget, m.gradients, m.saved, m.total - m.gradients - m.saved);
    p.record = m.layer;
    p.phase = m.in_backward ? step_phase::backward : step_phase::forward;
    p.micro_batch = micro;
    t.points.push_back(p);
  }
}

/// optimizer.step(): it starts from what backward left (the .grad tensors), holds its
/// temporaries at once (budget.hpp, optimizer_temporaries) and ends where it started.
constexpr void add_step_points(memory_timeline& t, const step_result& r) {
  const auto& b = t.budget;
  const auto left = r.live_after_backward - r.grads;
  for (const auto temporaries : {std::int64_t{0}, b.optimizer_temporaries, std::int64_t{0}}) {
    auto p = resident_point(b, r.grads, 0, checked_add(left, temporaries));
    p.phase = step_phase::optimizer_step;
    p.micro_batch = t.points.empty() ? 0 : t.points.back().micro_batch;
    t.points.push_back(p);
  }
}

}  // namespace detail

/// Every moment of one step of `m` trained (or run) as `plan` on `dev`, with that configuration's
/// budget: the highest point is the budget's peak (peak_tensor_bytes), at its peak record.
/// Usable at run time and in constant evaluation (its vectors must not escape it there).
template <std::size_t N>
constexpr memory_timeline timeline(const model<N>& m, const training& plan, const device& dev) {
  detail::check_divides(plan);
  detail::moment_recorder rec{};
  const auto r = detail::simulate_step<N>(m.records, plan, nullptr, nullptr, &rec);
  memory_timeline t{};
  detail::fill_budget(t.budget, r, plan, dev);
  t.records.assign(m.records.begin(), m.records.end());
  const auto& teacher = plan.teacher;
  if (teacher.present) {  // before the student's forward, as fill_budget counts it
    const auto brought_in = teacher.offloaded_to_cpu ? bytes_of(teacher.parameter_count, teacher.parameter_type) : 0;
    auto p = detail::resident_point(t.budget, 0, 0, checked_add(teacher.forward_peak_bytes, brought_in));
    p.phase = step_phase::teacher_forward;
    t.points.push_back(p);
  }
  detail::add_walk_points(t, rec);
  if (!plan.inference) detail::add_step_points(t, r);
  return t;
}

}  // namespace gpubudget
