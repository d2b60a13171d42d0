// gpubudget/probe/run_probes.hpp — run every probe on a device and print the markdown report.
// What benchmarks/probe/probe_main.cpp runs on a real GPU and the tests run on the fake one.
// No CUDA header.
#pragma once
#include <exception>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <gpubudget/probe/allocation_probe.hpp>
#include <gpubudget/probe/budget_check.hpp>
#include <gpubudget/probe/device_interface.hpp>
#include <gpubudget/probe/report.hpp>
#include <gpubudget/probe/workspace_check.hpp>

namespace gpubudget::probe {

struct probe_plan {
  bool measure_context = true;
  std::vector<module_loading> loading_modes{module_loading::inherit, module_loading::lazy, module_loading::eager};
  std::vector<allocation_request> allocations{default_allocation_requests.begin(), default_allocation_requests.end()};
  std::optional<std::int64_t> cublas_estimate;  // nullopt: PyTorch's default for this device
  std::vector<conv_estimate> convs;
  std::vector<category> budget;
  budget_check_options budget_options;
};

enum run_status : int { budget_fits = 0, budget_does_not_fit = 1, probe_failed = 2 };

/// Prints every section; a probe that throws is reported in its section and the run goes on.
/// Returns budget_fits, budget_does_not_fit, or probe_failed (an exception in the budget check).
inline int run_probes(device& dev, const probe_plan& plan, std::ostream& os) {
  auto failed = [&os](const char* what, const std::exception& e) {
    os << "> " << what << " probe failed: " << e.what() << "\n\n";
  };
  os << "# gpubudget device probe\n\n";
  print_device(os, describe(dev));

  if (plan.measure_context) {
    std::vector<context_cost> costs;
    for (const auto mode : plan.loading_modes) {
      try {
        costs.push_back(dev.measure_context_cost(mode));
      } catch (const std::exception& e) {
        context_cost c;
        c.mode = mode;
        c.note = std::string("failed: ") + e.what();
        costs.push_back(c);
      }
    }
    print_context_costs(os, costs);
  }

  try {
    print_allocations(os, probe_allocations(dev, plan.allocations));
  } catch (const std::exception& e) {
    failed("allocation", e);
  }

  try {
    const std::int64_t cublas = plan.cublas_estimate.value_or(pytorch_cublas_workspace_bytes(dev.capability()));
    print_workspaces(os, check_workspaces(dev, cublas, plan.convs));
  } catch (const std::exception& e) {
    failed("workspace", e);
  }

  if (plan.budget.empty()) return budget_fits;
  try {
    const auto r = check_budget(dev, plan.budget, plan.budget_options);
    print_budget_check(os, r);
    return r.fits() ? budget_fits : budget_does_not_fit;
  } catch (const std::exception& e) {
    failed("budget check", e);
    return probe_failed;
  }
}

}  // namespace gpubudget::probe
