// gpubudget/probe/report.hpp — markdown tables for the probe results. No CUDA header.
#pragma once
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include <gpubudget/probe/allocation_probe.hpp>
#include <gpubudget/probe/budget_check.hpp>
#include <gpubudget/probe/device_interface.hpp>
#include <gpubudget/probe/workspace_check.hpp>

namespace gpubudget::probe {

namespace text {

/// "512 B", "8.12 MiB", "14.74 GiB" (binary units, two decimals).
inline std::string bytes(std::int64_t b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b < 0 ? -b : b);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%s%lld B", b < 0 ? "-" : "", static_cast<long long>(b < 0 ? -b : b));
  else std::snprintf(buf, sizeof buf, "%s%.2f %s", b < 0 ? "-" : "", v, unit[u]);
  return buf;
}

/// Exact byte count with the rounded unit: "8519680 B (8.12 MiB)".
inline std::string exact(std::int64_t b) {
  if (b > -1024 && b < 1024) return bytes(b);
  return std::to_string(b) + " B (" + bytes(b) + ")";
}

inline std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

inline std::string percent(double p) { return fixed(p, 1) + " %"; }

inline std::string capability(compute_capability cc) {
  return std::to_string(cc.major) + "." + std::to_string(cc.minor);
}

}  // namespace text

struct device_summary {
  std::string name;
  compute_capability capability;
  memory_info memory;
};

inline device_summary describe(device& dev) { return {dev.name(), dev.capability(), dev.memory()}; }

inline void print_device(std::ostream& os, const device_summary& d) {
  os << "## Device\n\n"
     << "| field | value |\n|---|---|\n"
     << "| name | " << d.name << " |\n"
     << "| compute capability | " << text::capability(d.capability) << " |\n"
     << "| total (cudaMemGetInfo) | " << text::exact(d.memory.total) << " |\n"
     << "| free | " << text::exact(d.memory.free) << " |\n"
     << "| used (this process's context + other processes) | " << text::exact(d.memory.used()) << " |\n"
     << "| PyTorch cuBLAS workspace default | " << text::exact(pytorch_cublas_workspace_bytes(d.capability))
     << " |\n\n";
}

inline void print_context_costs(std::ostream& os, std::span<const context_cost> costs) {
  os << "## CUDA context cost\n\n"
     << "| CUDA_MODULE_LOADING | context | first kernel | first library call | total | how |\n"
     << "|---|---:|---:|---:|---:|---|\n";
  for (const auto& c : costs) {
    os << "| " << to_string(c.mode) << " | ";
    if (!c.measured) {
      os << "— | — | — | — | " << c.note << " |\n";
      continue;
    }
    os << text::bytes(c.context_bytes) << " | " << text::bytes(c.first_kernel_bytes) << " | "
       << (c.library_bytes ? text::bytes(*c.library_bytes) : std::string("—")) << " | " << text::bytes(c.total())
       << " | " << c.note << " |\n";
  }
  os << '\n';
}

inline std::string_view to_string(pytorch_allocator::pool p) {
  switch (p) {
    case pytorch_allocator::pool::none: return "—";
    case pytorch_allocator::pool::small: return "small";
    case pytorch_allocator::pool::large: return "large";
  }
  return "?";
}

inline void print_allocations(std::ostream& os, std::span<const allocation_sample> samples) {
  os << "## Allocation granularity (cudaMalloc)\n\n"
     << "| asked | count | device: free drop per allocation | overhead per allocation "
        "| PyTorch block | PyTorch segment | PyTorch held | pool |\n"
     << "|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& s : samples) {
    os << "| " << text::exact(s.bytes) << " | " << s.count << " | ";
    if (s.ok) {
      os << text::bytes(static_cast<std::int64_t>(s.observed_per_allocation())) << " | "
         << text::bytes(static_cast<std::int64_t>(s.overhead_per_allocation())) << " | ";
    } else {
      os << "failed: " << s.note << " | — | ";
    }
    os << text::bytes(s.pytorch.block) << " | " << text::bytes(s.pytorch.segment) << " | "
       << text::bytes(s.pytorch.held) << " | " << to_string(s.pytorch.kind) << " |\n";
  }
  const std::int64_t g = observed_granularity(samples);
  os << "\nSmallest free-memory drop of a single allocation: " << (g > 0 ? text::exact(g) : std::string("none seen"))
     << ".\n\n";
}

inline void print_workspaces(std::ostream& os, const workspace_report& w) {
  os << "## Workspace\n\n"
     << "| cuBLAS | bytes |\n|---|---:|\n"
     << "| estimate (caller) | " << text::exact(w.cublas.estimated) << " |\n"
     << "| PyTorch default for this device | " << text::exact(w.cublas.pytorch_default) << " |\n"
     << "| cuBLAS recommended (cublasSetWorkspace docs) | " << text::exact(w.cublas.cublas_recommended) << " |\n";
  if (w.cublas.device.available) {
    os << "| device: cublasCreate | " << text::exact(w.cublas.device.handle_bytes) << " |\n"
       << "| device: first GEMM (modules + workspace) | " << text::exact(w.cublas.device.first_gemm_bytes) << " |\n";
  } else {
    os << "| device | not measured: " << w.cublas.device.note << " |\n";
  }
  os << '\n';
  if (w.convs.empty()) return;
  os << "| convolution (cuDNN) | dtype | estimate | forward | backward data | backward filter "
        "| step peak | largest over algorithms | estimate − peak |\n"
     << "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& c : w.convs) {
    const auto& s = c.shape;
    os << "| " << s.name << ": " << s.n << "x" << s.c << "x" << s.h << "x" << s.w << " * " << s.k << "x" << s.r
       << "x" << s.s << " /" << s.stride_h << " | " << to_string(s.dtype) << " | " << text::bytes(c.estimated) << " | ";
    if (!c.device.available) {
      os << "— | — | — | — | — | not measured: " << c.device.note << " |\n";
      continue;
    }
    const auto& d = c.device;
    std::int64_t mx = d.forward_max;
    if (d.backward_data_max > mx) mx = d.backward_data_max;
    if (d.backward_filter_max > mx) mx = d.backward_filter_max;
    os << text::bytes(d.forward) << " | " << text::bytes(d.backward_data) << " | " << text::bytes(d.backward_filter)
       << " | " << text::bytes(d.step_peak()) << " | " << text::bytes(mx) << " | " << text::bytes(c.margin()) << " |\n";
  }
  os << '\n';
}

inline void print_budget_check(std::ostream& os, const budget_check_result& r) {
  os << "## Budget check on " << r.device_name << "\n\n"
     << "| # | category | phase | asked | device: free drop | device / asked | free before | outcome |\n"
     << "|---:|---|---|---:|---:|---:|---:|---|\n";
  int i = 0;
  for (const auto& row : r.rows) {
    os << "| " << ++i << " | " << row.name << " | " << to_string(row.ph) << " | " << text::bytes(row.asked) << " | ";
    if (row.outcome == category_outcome::allocated) {
      os << text::bytes(row.observed) << " | " << text::percent(row.percent()) << " | " << text::bytes(row.free_before);
    } else if (row.outcome == category_outcome::failed) {
      os << "— | — | " << text::bytes(row.free_before);
    } else {
      os << "— | — | —";
    }
    os << " | " << to_string(row.outcome) << " |\n";
  }
  auto pct = [](std::int64_t obs, std::int64_t asked) {
    return asked > 0 ? text::percent(100.0 * static_cast<double>(obs) / static_cast<double>(asked)) : std::string("—");
  };
  // device / asked compares allocated categories only, so a failure does not skew it.
  auto total_row = [&](const char* label, std::int64_t asked, std::int64_t observed, std::int64_t asked_allocated) {
    os << "| | **" << label << "** | | " << text::bytes(asked) << " | " << text::bytes(observed) << " | "
       << pct(observed, asked_allocated) << " | | |\n";
  };
  total_row("resident", r.asked(phase::resident), r.observed(phase::resident), r.asked_allocated(phase::resident));
  total_row("transient (step peak)", r.asked(phase::transient), r.observed(phase::transient),
            r.asked_allocated(phase::transient));
  total_row("total", r.total_asked(), r.total_observed(),
            r.asked_allocated(phase::resident) + r.asked_allocated(phase::transient));
  os << '\n';
  os << "Device total " << text::bytes(r.start.total) << ", free at start " << text::bytes(r.start.free)
     << ", free at peak " << text::bytes(r.peak.free) << ", free after cleanup " << text::bytes(r.end.free) << ".\n\n";
  if (r.failure) {
    const auto& f = *r.failure;
    os << "**Does not fit:** category `" << f.category << "` (" << to_string(f.ph) << ") asked for "
       << text::exact(f.asked) << " with " << text::exact(f.free) << " free, after " << text::bytes(f.allocated_before)
       << " of earlier categories (";
    if (f.asked > f.free) os << "short by " << text::bytes(f.asked - f.free);
    else os << "enough bytes free, but not allocatable: granularity or fragmentation";
    os << "; device said: " << (f.message.empty() ? std::string("no message") : f.message) << ").\n\n";
  } else if (!r.headroom_ok()) {
    os << "**Does not fit:** everything allocated, but only " << text::bytes(r.headroom())
       << " stays free at the peak, below the required reserve of " << text::bytes(r.min_headroom_bytes) << ".\n\n";
  } else {
    os << "**Fits:** " << text::bytes(r.headroom()) << " free at the step peak";
    if (r.min_headroom_bytes > 0) os << " (reserve " << text::bytes(r.min_headroom_bytes) << ")";
    os << ".\n\n";
  }
}

}  // namespace gpubudget::probe
