// gpubudget/probe/allocation_probe.hpp — granularity and overhead of raw device allocations
// (cudaMalloc), next to what PyTorch's caching allocator would reserve for the same request.
// Pure logic over `probe::device`; no CUDA header.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gpubudget/probe/caching_allocator_model.hpp>
#include <gpubudget/probe/device_interface.hpp>

namespace gpubudget::probe {

/// `count` allocations of `bytes` each, held together (count > 1 shows packing of small ones).
struct allocation_request {
  std::int64_t bytes = 0;
  int count = 1;
};

/// Sizes on both sides of the caching allocator's boundaries (caching_allocator_model.hpp):
/// 512 B blocks, the 1 MiB small/large split, 2 MiB segments, 10 MiB and 20 MiB rules. The
/// driver's own granularity is what this probe measures; nothing here assumes it.
inline constexpr std::array<allocation_request, 11> default_allocation_requests{{
    {1, 1},
    {1, 64},
    {512, 1},
    {1 << 20, 1},
    {(2 << 20) - 1, 1},
    {2 << 20, 1},
    {(2 << 20) + 1, 1},
    {(10 << 20) + 1, 1},
    {20 << 20, 1},
    {(20 << 20) + 1, 1},
    {(64 << 20) + 1, 1},
}};

struct allocation_sample {
  std::int64_t bytes = 0;
  int count = 1;
  bool ok = false;
  std::string note;             // the error when an allocation failed
  std::int64_t observed = 0;    // free-memory drop for all `count` allocations together
  pytorch_allocator::rounding pytorch{};  // what the caching allocator would do per request
  [[nodiscard]] double observed_per_allocation() const {
    return count > 0 ? static_cast<double>(observed) / count : 0.0;
  }
  /// Bytes the device charged beyond what was asked, per allocation.
  [[nodiscard]] double overhead_per_allocation() const {
    return observed_per_allocation() - static_cast<double>(bytes);
  }
};

/// Each request is measured on its own: allocate all `count`, read the free-memory drop, free.
inline std::vector<allocation_sample> probe_allocations(device& dev, std::span<const allocation_request> reqs) {
  std::vector<allocation_sample> out;
  out.reserve(reqs.size());
  for (const auto& rq : reqs) {
    allocation_sample s;
    s.bytes = rq.bytes;
    s.count = rq.count;
    s.pytorch = pytorch_allocator::model(rq.bytes);
    std::vector<device_allocation> held;
    held.reserve(static_cast<std::size_t>(rq.count > 0 ? rq.count : 0));
    const std::int64_t before = dev.memory().free;
    s.ok = true;
    for (int i = 0; i < rq.count; ++i) {
      alloc_result a = dev.allocate(rq.bytes);
      if (!a.ok()) {
        s.ok = false;
        s.note = a.message.empty() ? "allocation failed" : a.message;
        break;
      }
      held.emplace_back(dev, a.handle);
    }
    s.observed = before - dev.memory().free;
    out.push_back(std::move(s));
  }
  return out;
}

/// Smallest non-zero drop seen for a single allocation: the device's allocation granularity as
/// far as free memory shows it (0 when nothing was measured).
inline std::int64_t observed_granularity(std::span<const allocation_sample> samples) {
  std::int64_t g = 0;
  for (const auto& s : samples)
    if (s.ok && s.count == 1 && s.observed > 0 && (g == 0 || s.observed < g)) g = s.observed;
  return g;
}

}  // namespace gpubudget::probe
