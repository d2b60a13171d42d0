// gpubudget/probe/workspace_check.hpp — compare the workspace term of an estimate with what
// cuBLAS and cuDNN report on the device. Pure logic over `probe::device`; no CUDA header.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gpubudget/probe/device_interface.hpp>

namespace gpubudget::probe {

/// PyTorch's cuBLAS workspace per (handle, stream), allocated through its caching allocator.
/// Source: PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp, parseChosenWorkspaceSize():
/// default CUBLAS_WORKSPACE_CONFIG ":4096:2:16:8" = 2 x 4096 KiB + 8 x 16 KiB = 8519680 B
/// (8.125 MiB), and 4096 * 8 * 1024 = 32 MiB on Hopper (sm_90; current releases also use it
/// for compute capability 10.x and 12.x). PyTorch 1.13 used 8.125 MiB on every GPU.
inline constexpr std::int64_t pytorch_cublas_workspace_default = 4096LL * 1024 * 2 + 16LL * 1024 * 8;
inline constexpr std::int64_t pytorch_cublas_workspace_hopper = 4096LL * 8 * 1024;

constexpr std::int64_t pytorch_cublas_workspace_bytes(compute_capability cc) {
  return (cc.major == 9 || cc.major == 10 || cc.major == 12) ? pytorch_cublas_workspace_hopper
                                                              : pytorch_cublas_workspace_default;
}

/// cuBLAS's own recommendation for cublasSetWorkspace (cuBLAS API reference,
/// "cublasSetWorkspace()"): 32 MiB on Hopper, 4 MiB on other architectures.
constexpr std::int64_t cublas_recommended_workspace_bytes(compute_capability cc) {
  return cc.major == 9 ? 32LL * 1024 * 1024 : 4LL * 1024 * 1024;
}

/// A convolution and the workspace the caller's estimate charges for it.
struct conv_estimate {
  conv_shape shape;
  std::int64_t estimated_bytes = 0;
};

struct cublas_workspace_row {
  std::int64_t estimated = 0;
  std::int64_t pytorch_default = 0;
  std::int64_t cublas_recommended = 0;
  cublas_workspace_info device;
};

struct conv_workspace_row {
  conv_shape shape;
  std::int64_t estimated = 0;
  conv_workspace_info device;
  /// estimate minus what the heuristic's algorithms need at the step (negative = underestimate)
  [[nodiscard]] std::int64_t margin() const { return estimated - device.step_peak(); }
};

struct workspace_report {
  cublas_workspace_row cublas;
  std::vector<conv_workspace_row> convs;
};

/// Queries the device for each workspace and puts the caller's estimate next to it.
inline workspace_report check_workspaces(device& dev, std::int64_t cublas_estimate,
                                         std::span<const conv_estimate> convs) {
  workspace_report r;
  const compute_capability cc = dev.capability();
  r.cublas = {cublas_estimate, pytorch_cublas_workspace_bytes(cc), cublas_recommended_workspace_bytes(cc),
              dev.cublas_workspace()};
  r.convs.reserve(convs.size());
  for (const auto& c : convs) r.convs.push_back({c.shape, c.estimated_bytes, dev.conv_workspace(c.shape)});
  return r;
}

}  // namespace gpubudget::probe
