// Test helper: two budgets equal in every field the walk and the caching allocator replay fill
// (budget_totals_of against budget_totals: tests/static/budget_of_facts.cpp, tests/unit/test_budget_of.cpp).
#pragma once
#include <gpubudget/budget.hpp>

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

}  // namespace gpubudget::testing
