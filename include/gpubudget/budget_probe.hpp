// gpubudget/budget_probe.hpp — turns a compile-time budget into the categories the budget
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
  for (const auto& c : components(b)) {
    if (c.kind == component_kind::device_reserved) continue;  // context: paid already; fragmentation: not allocated
    add(c.label, c.bytes, c.kind == component_kind::resident ? phase::resident : phase::transient);
  }
  return out;
}

}  // namespace gpubudget::probe
