// gpubudget/probe/from_budget.hpp — turns a compile-time budget into the categories the budget
// check allocates on the device: resident state first, then what the step's peak adds.
#pragma once
#include <vector>

#include <gpubudget/budget.hpp>
#include <gpubudget/probe/budget_check.hpp>

namespace gpubudget::probe {

/// The categories of `b` with non-zero bytes. The CUDA context is not a category: the device
/// has already paid it when the check runs (the context probe measures it).
inline std::vector<category> budget_categories(const memory_budget& b) {
  std::vector<category> out;
  auto add = [&](std::string_view name, std::int64_t bytes, phase ph) {
    if (bytes > 0) out.push_back(category{name, bytes, ph});
  };
  add("parameters", b.parameters, phase::resident);
  add("buffers", b.buffers, phase::resident);
  add("fp32 master weights", b.master_weights, phase::resident);
  add("optimizer state", b.optimizer_state, phase::resident);
  add("EMA copy", b.ema, phase::resident);
  add("teacher", b.teacher, phase::resident);
  add("input batch", b.input_batch, phase::resident);
  add("gradients (at peak)", b.gradients_at_peak, phase::transient);
  add("activations + temporaries (at peak)", b.activations_at_peak(), phase::transient);
  add("cuBLAS + cuDNN workspace", b.workspace(), phase::transient);
  add("allocator rounding", b.allocator_rounding, phase::transient);
  return out;
}

}  // namespace gpubudget::probe
