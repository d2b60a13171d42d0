// tools/budget_view.hpp — the one place the command-line tool reads `memory_budget`.
//
// The library's budget struct may rename its fields as it evolves; the tool reads them only in
// `view_of` below and works with `budget_view`'s names everywhere else (tables, JSON, the
// reference check, the teacher's size), so such a rename touches this file alone.
#pragma once
#include <cstdint>
#include <string>

#include <gpubudget/budget.hpp>
#include <gpubudget/check.hpp>

namespace gpubudget::tools {

/// A budget's numbers under the tool's own, stable names. Bytes unless said otherwise.
struct budget_view {
  std::string device;
  std::int64_t capacity = 0;
  std::int64_t parameter_count = 0, trainable_count = 0;  ///< elements
  // resident state
  std::int64_t parameters = 0, buffers = 0, master_weights = 0, optimizer_state = 0, ema = 0, teacher = 0, input_batch = 0;
  // one step (live tensor bytes above the resident state)
  std::int64_t gradients = 0, gradients_at_peak = 0, activations_at_peak = 0, saved_for_backward = 0, after_forward = 0;
  std::int64_t forward_peak = 0, forward_backward_peak = 0, step_peak = 0, optimizer_temporaries = 0;
  // the caching allocator model's replay (allocator_modelled): the step in allocated blocks
  bool allocator_modelled = false;
  std::int64_t allocated_after_forward = 0, allocated_fwd_bwd_peak = 0, allocated_step_peak = 0, allocated_total_peak = 0;
  // device side
  std::int64_t cuda_context = 0, cublas_workspace = 0, cudnn_workspace = 0, allocator_rounding = 0, fragmentation = 0;
  // totals
  std::int64_t live_tensor_bytes_at_peak = 0, device_total = 0, headroom = 0;
  bool fits = false;
  /// --largest-batch: the largest micro-batch that fits the device (max_micro_batch; -1: not asked)
  std::int64_t largest_micro_batch = -1;
};

/// The adapter: every read of a `memory_budget` member by the tool happens here.
inline budget_view view_of(const memory_budget& b) {
  budget_view v;
  v.device = std::string(b.device_name);
  v.capacity = b.capacity;
  v.parameter_count = b.parameter_count;
  v.trainable_count = b.trainable_count;
  v.parameters = b.parameters;
  v.buffers = b.buffers;
  v.master_weights = b.master_weights;
  v.optimizer_state = b.optimizer_state;
  v.ema = b.ema;
  v.teacher = b.teacher;
  v.input_batch = b.input_batch;
  v.gradients = b.gradients;
  v.gradients_at_peak = b.gradients_at_peak;
  v.activations_at_peak = b.activations_at_peak();
  v.saved_for_backward = b.saved_activations;
  v.after_forward = b.after_forward;
  v.forward_peak = b.forward_peak;
  v.forward_backward_peak = b.fwd_bwd_peak;
  v.step_peak = b.step_peak;
  v.optimizer_temporaries = b.optimizer_temporaries;
  v.allocator_modelled = b.allocator_modelled;
  v.allocated_after_forward = b.allocated_after_forward;
  v.allocated_fwd_bwd_peak = b.allocated_fwd_bwd_peak;
  v.allocated_step_peak = b.allocated_step_peak;
  v.allocated_total_peak = b.allocated_total_peak;
  v.cuda_context = b.cuda_context;
  v.cublas_workspace = b.cublas_workspace;
  v.cudnn_workspace = b.cudnn_workspace;
  v.allocator_rounding = b.allocator_rounding;
  v.fragmentation = b.fragmentation;
  v.live_tensor_bytes_at_peak = b.peak_tensor_bytes();
  v.device_total = b.total();
  v.headroom = b.headroom();
  v.fits = fits(b);
  return v;
}

}  // namespace gpubudget::tools
