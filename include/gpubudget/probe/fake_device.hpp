// gpubudget/probe/fake_device.hpp — a simulated device for testing the probe logic without a GPU:
// fixed capacity, a context cost, allocation granularity, out-of-memory, injectable errors, and
// a count of outstanding allocations so tests can prove cleanup. No CUDA header.
//
// All defaults below are synthetic test values, not measurements of any real GPU.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <gpubudget/probe/device_interface.hpp>

namespace gpubudget::probe {

struct fake_device_config {
  std::string name = "fake GPU (simulated)";
  compute_capability capability{8, 0};
  std::int64_t total_bytes = 16LL << 30;
  std::int64_t other_processes_bytes = 0;  // used by someone else before we start
  std::int64_t context_bytes = 256LL << 20;  // charged at construction, like a real context
  std::int64_t granularity = 2LL << 20;      // every allocation rounds up to this
  std::int64_t kernel_bytes_lazy = 2LL << 20;
  std::int64_t kernel_bytes_eager = 2LL << 20;
  std::int64_t library_bytes_lazy = 8LL << 20;
  std::int64_t library_bytes_eager = 320LL << 20;
  cublas_workspace_info cublas{true, "simulated", 2LL << 20, 10LL << 20};
  std::optional<conv_workspace_info> conv;  // answer for every shape; nullopt = no cuDNN
  /// Throw std::runtime_error on this allocation (0-based count of allocate calls); for tests.
  std::optional<int> throw_on_allocation;
};

class fake_device final : public device {
 public:
  explicit fake_device(fake_device_config cfg = {}) : cfg_(std::move(cfg)) {
    if (cfg_.granularity <= 0) throw std::invalid_argument("fake_device: granularity must be positive");
  }

  [[nodiscard]] std::string name() const override { return cfg_.name; }
  [[nodiscard]] compute_capability capability() const override { return cfg_.capability; }

  [[nodiscard]] memory_info memory() override {
    return {cfg_.total_bytes - cfg_.other_processes_bytes - cfg_.context_bytes - in_use_, cfg_.total_bytes};
  }

  [[nodiscard]] alloc_result allocate(std::int64_t bytes) override {
    const int call = calls_++;
    if (cfg_.throw_on_allocation && *cfg_.throw_on_allocation == call)
      throw std::runtime_error("fake_device: injected runtime error");
    if (bytes < 0) return {alloc_status::error, {}, "invalid argument"};
    const std::int64_t charged = rounded(bytes);
    if (charged > memory().free) return {alloc_status::out_of_memory, {}, "out of memory (simulated)"};
    const std::uintptr_t id = next_id_++;
    live_.emplace(id, charged);
    in_use_ += charged;
    return {alloc_status::ok, {id}, {}};
  }

  void release(allocation_handle h) noexcept override {
    const auto it = live_.find(h.value);
    if (it == live_.end()) {
      ++bad_releases_;
      return;
    }
    in_use_ -= it->second;
    live_.erase(it);
  }

  [[nodiscard]] context_cost measure_context_cost(module_loading mode) override {
    const bool eager = mode == module_loading::eager;
    context_cost c;
    c.mode = mode;
    c.measured = true;
    c.note = "simulated";
    c.context_bytes = cfg_.context_bytes;
    c.first_kernel_bytes = eager ? cfg_.kernel_bytes_eager : cfg_.kernel_bytes_lazy;
    c.library_bytes = eager ? cfg_.library_bytes_eager : cfg_.library_bytes_lazy;
    return c;
  }

  [[nodiscard]] cublas_workspace_info cublas_workspace() override { return cfg_.cublas; }
  [[nodiscard]] conv_workspace_info conv_workspace(const conv_shape& s) override {
    return cfg_.conv ? *cfg_.conv : device::conv_workspace(s);
  }

  /// Bytes an allocation of `bytes` is charged (granularity rounding).
  [[nodiscard]] std::int64_t rounded(std::int64_t bytes) const {
    return (bytes + cfg_.granularity - 1) / cfg_.granularity * cfg_.granularity;
  }
  [[nodiscard]] std::size_t outstanding() const { return live_.size(); }
  [[nodiscard]] std::int64_t bytes_in_use() const { return in_use_; }
  [[nodiscard]] int allocation_calls() const { return calls_; }
  [[nodiscard]] int bad_releases() const { return bad_releases_; }
  [[nodiscard]] const fake_device_config& config() const { return cfg_; }

 private:
  fake_device_config cfg_;
  std::map<std::uintptr_t, std::int64_t> live_;
  std::int64_t in_use_ = 0;
  std::uintptr_t next_id_ = 1;
  int calls_ = 0;
  int bad_releases_ = 0;
};

}  // namespace gpubudget::probe
