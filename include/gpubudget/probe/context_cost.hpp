// gpubudget/probe/context_cost.hpp — how the CUDA context cost is measured, minus the CUDA calls.
//
// CUDA_MODULE_LOADING is read once, when the driver initializes, so LAZY and EAGER cannot both
// be measured in one process. The parent probe (which already holds its own context) records
// its free memory, re-runs its own executable as a child with the variable set, and the child
// reports one line (below). While the child is alive and the parent waits, the only thing that
// changed on the device is the child's context, so `parent free - child free after context` is
// the context cost. (Other processes allocating at the same time would disturb this.)
//
// This header holds the protocol and the arithmetic, so it is tested without a GPU.
#pragma once
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <gpubudget/probe/device_interface.hpp>

namespace gpubudget::probe {

/// Set (to the device ordinal) in the child's environment; its presence selects child mode.
inline constexpr const char* context_child_env = "GPUBUDGET_PROBE_CONTEXT_CHILD";
/// The driver's variable (CUDA C Programming Guide, "CUDA Environment Variables").
inline constexpr const char* module_loading_env = "CUDA_MODULE_LOADING";

/// What the child measured, in its own process.
struct context_child_report {
  std::int64_t free_after_context = 0;  // cudaMemGetInfo right after cudaFree(0)
  std::int64_t kernel_bytes = 0;        // free-memory drop of loading + launching one kernel
  std::optional<std::int64_t> library_bytes;  // drop of the optional library step
};

inline constexpr std::string_view context_child_tag = "gpubudget-context-child";

/// One line: "gpubudget-context-child after_context=N kernel=N [library=N]".
inline std::string format_context_child_report(const context_child_report& r) {
  std::string s{context_child_tag};
  s += " after_context=" + std::to_string(r.free_after_context);
  s += " kernel=" + std::to_string(r.kernel_bytes);
  if (r.library_bytes) s += " library=" + std::to_string(*r.library_bytes);
  return s;
}

namespace detail {
inline std::optional<std::int64_t> field(std::string_view line, std::string_view key) {
  const std::string k = " " + std::string(key) + "=";
  const auto pos = line.find(k);
  if (pos == std::string_view::npos) return std::nullopt;
  const char* first = line.data() + pos + k.size();
  const char* last = line.data() + line.size();
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc{} || ptr == first) return std::nullopt;
  return v;
}
}  // namespace detail

/// Finds the child's line anywhere in its output (libraries may print before it).
inline std::optional<context_child_report> parse_context_child_report(std::string_view output) {
  const auto start = output.rfind(context_child_tag);
  if (start == std::string_view::npos) return std::nullopt;
  auto line = output.substr(start);
  line = line.substr(0, line.find('\n'));
  const auto after = detail::field(line, "after_context");
  const auto kernel = detail::field(line, "kernel");
  if (!after || !kernel) return std::nullopt;
  return context_child_report{*after, *kernel, detail::field(line, "library")};
}

/// The cost, given the parent's free memory just before it started the child.
inline context_cost context_cost_from(module_loading mode, std::int64_t parent_free_before,
                                      const context_child_report& child) {
  context_cost c;
  c.mode = mode;
  c.measured = true;
  c.context_bytes = parent_free_before - child.free_after_context;
  c.first_kernel_bytes = child.kernel_bytes;
  c.library_bytes = child.library_bytes;
  c.note = "child process, free-memory drop seen against the parent's baseline";
  return c;
}

}  // namespace gpubudget::probe
