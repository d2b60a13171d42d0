// gpubudget/probe/cuda_device.hpp — `probe::device` over the CUDA runtime API (host C++, no nvcc).
// Link with CUDA::cudart. The only probe header besides cuda_libraries.hpp that needs the toolkit.
//
// Context cost is measured in a child process (see context_cost.hpp), so a program that calls
// measure_context_cost() must start with
//     if (auto rc = gpubudget::probe::cuda::run_context_child_if_requested()) return *rc;
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gpubudget/probe/context_cost.hpp>
#include <gpubudget/probe/detail/spawn.hpp>
#include <gpubudget/probe/device_interface.hpp>

namespace gpubudget::probe::cuda {

class cuda_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline std::string error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

inline void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear it so the next call does not report it again
    throw cuda_error(std::string(call) + " failed: " + error_text(e));
  }
}

struct device_count_result {
  int count = 0;
  std::string error;  // empty when cudaGetDeviceCount succeeded
};

/// cudaGetDeviceCount, without throwing: no driver or no GPU is an ordinary outcome here.
inline device_count_result device_count() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return {0, error_text(e)};
  }
  return {n, {}};
}

/// cudaMemGetInfo on the current device.
inline memory_info current_memory() {
  std::size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  return {static_cast<std::int64_t>(free_b), static_cast<std::int64_t>(total_b)};
}

/// An empty kernel as PTX, so a first kernel launch needs no nvcc. PTX ISA 7.0 / sm_52 is
/// JIT-compiled by the driver for the GPU at hand (PTX is forward compatible).
inline constexpr const char* noop_kernel_ptx =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry gpubudget_noop()\n"
    "{\n"
    "\tret;\n"
    "}\n";

/// Free-memory drop of loading one module and launching its kernel once (module load,
/// launch resources such as the local-memory reservation) on the current device.
inline std::int64_t measure_first_kernel() {
  const std::int64_t before = current_memory().free;
  cudaLibrary_t lib = nullptr;
  check(cudaLibraryLoadData(&lib, noop_kernel_ptx, nullptr, nullptr, 0, nullptr, nullptr, 0), "cudaLibraryLoadData");
  struct unload {
    cudaLibrary_t l;
    ~unload() { (void)cudaLibraryUnload(l); }
  } guard{lib};
  cudaKernel_t k = nullptr;
  check(cudaLibraryGetKernel(&k, lib, "gpubudget_noop"), "cudaLibraryGetKernel");
  // cudaLaunchKernel accepts a cudaKernel_t cast to a function pointer (CUDA runtime API docs).
  check(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1), dim3(1), nullptr, 0, nullptr), "cudaLaunchKernel");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return before - current_memory().free;
}

/// Optional extra step the context child runs after the first kernel (e.g. a first cuBLAS
/// GEMM, see cuda_libraries.hpp); returns the free-memory drop it caused.
using library_step = std::function<std::optional<std::int64_t>(int ordinal)>;

/// Child side of the context-cost measurement. Returns std::nullopt in a normal run; in a
/// context child it measures, prints the report line, and returns the exit code for main.
inline std::optional<int> run_context_child_if_requested(const library_step& step = {}) {
  const char* v = std::getenv(context_child_env);
  if (v == nullptr) return std::nullopt;
  try {
    const int ordinal = std::atoi(v);
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    check(cudaFree(nullptr), "cudaFree(0)");  // creates the primary context
    context_child_report r;
    r.free_after_context = current_memory().free;
    r.kernel_bytes = measure_first_kernel();
    if (step) r.library_bytes = step(ordinal);
    std::printf("%s\n", format_context_child_report(r).c_str());
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubudget context child: %s\n", e.what());
    return 1;
  }
}

class cuda_device : public device {
 public:
  /// Selects the device and creates its primary context, so later free-memory drops exclude it.
  explicit cuda_device(int ordinal = 0) : ordinal_(ordinal) {
    check(cudaSetDevice(ordinal_), "cudaSetDevice");
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, ordinal_), "cudaGetDeviceProperties");
    name_ = p.name;
    cc_ = {p.major, p.minor};
    check(cudaFree(nullptr), "cudaFree(0)");
    at_open_ = current_memory();
    child_exe_ = detail::self_executable();
  }

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] compute_capability capability() const override { return cc_; }
  [[nodiscard]] int ordinal() const { return ordinal_; }
  /// Free/total right after this process's context was created.
  [[nodiscard]] memory_info memory_at_open() const { return at_open_; }

  [[nodiscard]] memory_info memory() override {
    select();
    return current_memory();
  }

  [[nodiscard]] alloc_result allocate(std::int64_t bytes) override {
    if (bytes < 0) return {alloc_status::error, {}, "negative size"};
    select();
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, static_cast<std::size_t>(bytes));  // never managed memory
    if (e == cudaSuccess) return {alloc_status::ok, {reinterpret_cast<std::uintptr_t>(p)}, {}};
    (void)cudaGetLastError();
    return {e == cudaErrorMemoryAllocation ? alloc_status::out_of_memory : alloc_status::error, {}, error_text(e)};
  }

  void release(allocation_handle h) noexcept override {
    select();
    if (cudaFree(reinterpret_cast<void*>(h.value)) != cudaSuccess) (void)cudaGetLastError();
  }

  /// Re-runs `child_executable()` with CUDA_MODULE_LOADING set (see context_cost.hpp).
  [[nodiscard]] context_cost measure_context_cost(module_loading mode) override {
    context_cost c;
    c.mode = mode;
    if (std::getenv(context_child_env) != nullptr) {
      c.note = "not measured: running as a context child that did not call run_context_child_if_requested()";
      return c;
    }
    if (child_exe_.empty()) {
      c.note = "not measured: no child executable (/proc/self/exe unreadable)";
      return c;
    }
    std::vector<detail::env_override> env{{context_child_env, std::to_string(ordinal_)}};
    if (mode != module_loading::inherit) env.push_back({module_loading_env, std::string(to_string(mode))});
    const std::int64_t before = memory().free;
    const detail::spawn_result r = detail::run_and_capture(child_exe_, {}, env);
    const auto report = parse_context_child_report(r.output);
    if (!r.started || r.exit_code != 0 || !report) {
      c.note = "not measured: child " + (r.started ? "exited with " + std::to_string(r.exit_code) : r.error) +
               (report ? "" : ", no report line");
      return c;
    }
    c = context_cost_from(mode, before, *report);
    if (mode == module_loading::inherit) {
      const char* inherited = std::getenv(module_loading_env);
      c.note += std::string("; CUDA_MODULE_LOADING ") + (inherited ? inherited : "unset (driver default)");
    }
    return c;
  }

  [[nodiscard]] const std::string& child_executable() const { return child_exe_; }
  void set_child_executable(std::string path) { child_exe_ = std::move(path); }

 protected:
  void select() const { (void)cudaSetDevice(ordinal_); }

 private:
  int ordinal_ = 0;
  std::string name_;
  compute_capability cc_;
  memory_info at_open_;
  std::string child_exe_;
};

}  // namespace gpubudget::probe::cuda
