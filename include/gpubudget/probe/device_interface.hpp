// gpubudget/probe/device_interface.hpp — the small device interface the probes talk to.
//
// The probe logic (budget check, allocation probe, workspace comparison, reports) only sees
// `gpubudget::probe::device`. `cuda_device.hpp` implements it over the CUDA runtime;
// `fake_device.hpp` simulates one for tests. This header includes no CUDA header.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpubudget::probe {

/// SM version, e.g. {8, 0} for A100, {9, 0} for H100.
struct compute_capability {
  int major = 0;
  int minor = 0;
  friend constexpr bool operator==(compute_capability, compute_capability) = default;
};

/// What cudaMemGetInfo reports: bytes free on the device and bytes the driver lets us use.
struct memory_info {
  std::int64_t free = 0;
  std::int64_t total = 0;
  [[nodiscard]] constexpr std::int64_t used() const { return total - free; }
};

/// Opaque allocation handle (a device pointer for CUDA, an id for the fake).
struct allocation_handle {
  std::uintptr_t value = 0;
};

enum class alloc_status : std::uint8_t { ok, out_of_memory, error };

struct alloc_result {
  alloc_status status = alloc_status::error;
  allocation_handle handle{};
  std::string message;  // the runtime's error string when status != ok
  [[nodiscard]] bool ok() const { return status == alloc_status::ok; }
};

/// CUDA_MODULE_LOADING, read by the driver when the context is created. `inherit` leaves the
/// variable as the parent process has it (default LAZY on Linux since CUDA 12.2, on all platforms
/// since 12.3: CUDA C Programming Guide, "Lazy Loading", change history table).
enum class module_loading : std::uint8_t { inherit, lazy, eager };

constexpr std::string_view to_string(module_loading m) {
  switch (m) {
    case module_loading::inherit: return "inherit";
    case module_loading::lazy: return "LAZY";
    case module_loading::eager: return "EAGER";
  }
  return "?";
}

/// Device memory a fresh CUDA context costs, measured as free-memory drops.
struct context_cost {
  module_loading mode = module_loading::inherit;
  bool measured = false;
  std::string note;                     // how it was measured, or why it was not
  std::int64_t context_bytes = 0;       // context creation (cudaFree(0))
  std::int64_t first_kernel_bytes = 0;  // first kernel launch (loads the runtime's module)
  std::optional<std::int64_t> library_bytes;  // first library call (e.g. cuBLAS GEMM), if run
  [[nodiscard]] std::int64_t total() const {
    return context_bytes + first_kernel_bytes + library_bytes.value_or(0);
  }
};

/// What a cuBLAS handle costs on the device.
struct cublas_workspace_info {
  bool available = false;
  std::string note;
  std::int64_t handle_bytes = 0;      // free-memory drop of cublasCreate
  std::int64_t first_gemm_bytes = 0;  // further drop of the first GEMM (modules + workspace)
};

enum class conv_dtype : std::uint8_t { fp32, fp16, bf16 };

constexpr std::string_view to_string(conv_dtype t) {
  switch (t) {
    case conv_dtype::fp32: return "fp32";
    case conv_dtype::fp16: return "fp16";
    case conv_dtype::bf16: return "bf16";
  }
  return "?";
}

/// A 2-D convolution, NCHW, cross-correlation (what torch.nn.Conv2d computes).
struct conv_shape {
  std::string_view name;
  int n = 1, c = 1, h = 1, w = 1;  // input
  int k = 1, r = 1, s = 1;         // output channels, kernel height, kernel width
  int pad_h = 0, pad_w = 0;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int groups = 1;
  conv_dtype dtype = conv_dtype::fp32;
};

/// cuDNN workspace sizes for one convolution: the algorithm cuDNN's heuristic ranks first
/// (what PyTorch picks with cudnn.benchmark=False) and the largest over all algorithms it
/// reports as usable (the upper bound cudnn.benchmark=True may try).
struct conv_workspace_info {
  bool available = false;
  std::string note;
  std::int64_t forward = 0, backward_data = 0, backward_filter = 0;
  std::int64_t forward_max = 0, backward_data_max = 0, backward_filter_max = 0;
  /// The three passes run one after another, so a step needs the largest, not the sum.
  [[nodiscard]] std::int64_t step_peak() const {
    std::int64_t m = forward;
    if (backward_data > m) m = backward_data;
    if (backward_filter > m) m = backward_filter;
    return m;
  }
};

/// The device interface. Out-of-memory is a result (`alloc_status::out_of_memory`), not an
/// exception; an implementation throws only on unexpected runtime errors.
class device {
 public:
  device() = default;
  device(const device&) = delete;
  device& operator=(const device&) = delete;
  virtual ~device() = default;

  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual compute_capability capability() const = 0;
  /// Free and total bytes now (cudaMemGetInfo).
  [[nodiscard]] virtual memory_info memory() = 0;
  /// Plain device memory (cudaMalloc) — never managed memory, which would oversubscribe.
  [[nodiscard]] virtual alloc_result allocate(std::int64_t bytes) = 0;
  virtual void release(allocation_handle h) noexcept = 0;
  /// Cost of a fresh context with CUDA_MODULE_LOADING set to `mode`.
  [[nodiscard]] virtual context_cost measure_context_cost(module_loading mode) = 0;

  /// Workspace queries; a device without the library answers `available = false`.
  [[nodiscard]] virtual cublas_workspace_info cublas_workspace() {
    return {false, "cuBLAS not linked into this probe", 0, 0};
  }
  [[nodiscard]] virtual conv_workspace_info conv_workspace(const conv_shape&) {
    conv_workspace_info r;
    r.note = "cuDNN not linked into this probe";
    return r;
  }
};

/// Owns one allocation; releases it on destruction, also during stack unwinding.
class device_allocation {
 public:
  device_allocation() = default;
  device_allocation(device& d, allocation_handle h) : dev_(&d), h_(h) {}
  device_allocation(device_allocation&& o) noexcept : dev_(std::exchange(o.dev_, nullptr)), h_(o.h_) {}
  device_allocation& operator=(device_allocation&& o) noexcept {
    if (this != &o) {
      reset();
      dev_ = std::exchange(o.dev_, nullptr);
      h_ = o.h_;
    }
    return *this;
  }
  device_allocation(const device_allocation&) = delete;
  device_allocation& operator=(const device_allocation&) = delete;
  ~device_allocation() { reset(); }

  void reset() noexcept {
    if (dev_ != nullptr) std::exchange(dev_, nullptr)->release(h_);
  }
  [[nodiscard]] explicit operator bool() const { return dev_ != nullptr; }
  [[nodiscard]] allocation_handle handle() const { return h_; }

 private:
  device* dev_ = nullptr;
  allocation_handle h_{};
};

}  // namespace gpubudget::probe
