// Test helpers: two budgets equal in every field the walk and the caching allocator replay fill
// (budget_totals_of against budget_totals: tests/static/budget_of_facts.cpp, tests/unit/test_budget_of.cpp).
#pragma once
#include <gpubudget/budget.hpp>
#include <gpubudget/budget_of.hpp>

namespace gpubudget::testing {

constexpr bool same_budget(const memory_budget& a, const memory_budget& b) {
  return a.total() == b.total() && a.parameters == b.parameters && a.optimizer_state == b.optimizer_state &&
         a.saved_activations == b.saved_activations && a.step_peak == b.step_peak && a.fwd_bwd_peak == b.fwd_bwd_peak &&
         a.cudnn_workspace == b.cudnn_workspace && a.allocator_rounding == b.allocator_rounding && a.fragmentation == b.fragmentation &&
         a.allocator_modelled == b.allocator_modelled && a.allocator_out_of_memory == b.allocator_out_of_memory &&
         a.reserved_peak == b.reserved_peak && a.allocated_after_forward == b.allocated_after_forward &&
         a.allocated_fwd_bwd_peak == b.allocated_fwd_bwd_peak && a.allocated_step_peak == b.allocated_step_peak &&
         a.allocated_total_peak == b.allocated_total_peak;
}

/// Two walks of a step equal in every field (a split walk, budget_of.hpp, against a whole one).
constexpr bool same_step(const detail::step_result& a, const detail::step_result& b) {
  const auto& t = a.totals;
  const auto& u = b.totals;
  const bool totals = t.parameter_count == u.parameter_count && t.trainable_count == u.trainable_count && t.buffer_bytes == u.buffer_bytes &&
                      t.base_weight_count == u.base_weight_count && t.base_weight_bytes == u.base_weight_bytes &&
                      t.own_type_count == u.own_type_count && t.own_type_bytes == u.own_type_bytes &&
                      t.own_type_trainable == u.own_type_trainable && t.own_type_trainable_bytes == u.own_type_trainable_bytes &&
                      t.largest_trainable == u.largest_trainable && t.trainable_adam8bit_state == u.trainable_adam8bit_state &&
                      t.input_bytes == u.input_bytes && t.largest_im2col == u.largest_im2col;
  return totals && a.saved == b.saved && a.after_forward == b.after_forward && a.forward_peak == b.forward_peak &&
         a.fwd_bwd_peak == b.fwd_bwd_peak && a.peak_rounded == b.peak_rounded && a.live_after_backward == b.live_after_backward &&
         a.grads_at_peak == b.grads_at_peak && a.grads == b.grads && a.live_after_backward_fixed == b.live_after_backward_fixed &&
         a.peak_layer == b.peak_layer && a.peak_in_backward == b.peak_in_backward;
}

}  // namespace gpubudget::testing
