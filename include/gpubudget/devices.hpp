// gpubudget/devices.hpp — GPUs a budget can be checked against.
#pragma once
#include <cstdint>
#include <string_view>

#include <gpubudget/units.hpp>

namespace gpubudget {

/// Catalog entries by name: a template argument that both compilers print by name in a failing
/// fit check (Clang 14 prints a device_label's characters as numbers).
enum class catalog_gpu : std::uint8_t { custom, t4, v100_16gb, v100_32gb, a10, l4, a100_40gb, a100_80gb, h100_80gb, h200, rtx3090, rtx4090, generic_16gb };

/// A GPU as a budget sees it. `capacity` is what cudaMemGetInfo reports as total (slightly
/// below the marketing size: the driver keeps some); `context` is the CUDA context plus the
/// framework's kernels resident after the first launch.
struct device {
  std::string_view name = "custom";
  std::int64_t capacity = 0;
  std::int64_t context = 0;
  /// cuBLAS workspace per handle and stream: PyTorch's CUBLAS_WORKSPACE_CONFIG default is
  /// ":4096:2:16:8" = 2×4096 KiB + 8×16 KiB = 8.125 MiB, and ":4096:8" = 32 MiB on Hopper
  /// (aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize, PyTorch 2.x).
  std::int64_t cublas_workspace = 8 * MiB + 128 * KiB;
  std::int32_t compute_capability = 0;  ///< e.g. 75 for sm_75
  catalog_gpu id = catalog_gpu::custom;
  /// Were capacity, context and cuBLAS workspace measured on this GPU (then `source` names the
  /// file and date), or are they the cited defaults above (`source` says so)?
  bool measured = false;
  std::string_view source = "cited defaults: context 500 MB (seed 002), capacity from PyTorch OOM messages";
  /// What a process that only runs forwards holds outside the caching allocator (generate() under
  /// inference_mode: no autograd device thread, no backward or optimizer kernels loaded); 0: not
  /// measured, `context` stands for it (inference_context_of).
  std::int64_t inference_context = 0;
};

/// The non-allocator bytes of an inference process on `d` (device::inference_context where
/// measured, else the training process's context).
constexpr std::int64_t inference_context_of(const device& d) { return d.inference_context > 0 ? d.inference_context : d.context; }

/// A user-defined device: capacity and context in bytes.
constexpr device custom_device(std::string_view name, std::int64_t capacity, std::int64_t context = 500 * MB) {
  return device{name, capacity, context};
}

namespace devices {

// CUDA context default: seed report 002 budgets CUDA_CONTEXT_MB = 500 (decimal MB), in line
// with the 300-500 MiB PyTorch's CUDA context measures on recent drivers with lazy loading.
// Replace it with the probe's measurement (examples/probe) for a given driver.
inline constexpr std::int64_t default_context = 500 * MB;

/// `v` GiB in bytes (capacities are quoted to 0.01 GiB).
constexpr std::int64_t gib(double v) { return static_cast<std::int64_t>(v * static_cast<double>(GiB)); }

// Capacities are the "total capacity" PyTorch prints in its CUDA OOM message, i.e.
// cudaMemGetInfo's total (a little below the board's size: the driver reserves some). Seed
// figures come from the seed reports; the others from such messages quoted in public PyTorch
// issue threads for that board. The probe (benchmarks/probe) measures the real one.
/// Tesla T4: 14.74 GiB (seed report 003's OOM message).
inline constexpr device t4{"T4", gib(14.74), default_context, 8 * MiB + 128 * KiB, 75, catalog_gpu::t4};
/// V100 16 GB: 15.78 GiB (PyTorch OOM messages on V100-SXM2-16GB).
inline constexpr device v100_16gb{"V100 16GB", gib(15.78), default_context, 8 * MiB + 128 * KiB, 70, catalog_gpu::v100_16gb};
/// V100 32 GB: 31.73 GiB (seed report 000's OOM message on a 32 GB card).
inline constexpr device v100_32gb{"V100 32GB", gib(31.73), default_context, 8 * MiB + 128 * KiB, 70, catalog_gpu::v100_32gb};
/// A10 (24 GB GDDR6): 22.20 GiB (PyTorch OOM messages on A10G).
inline constexpr device a10{"A10", gib(22.20), default_context, 8 * MiB + 128 * KiB, 86, catalog_gpu::a10};
/// L4 (24 GB GDDR6): 22.05 GiB (PyTorch OOM messages on L4).
inline constexpr device l4{"L4", gib(22.05), default_context, 8 * MiB + 128 * KiB, 89, catalog_gpu::l4};
/// A100 40 GB: 39.39 GiB (PyTorch OOM messages on A100-SXM4-40GB).
inline constexpr device a100_40gb{"A100 40GB", gib(39.39), default_context, 8 * MiB + 128 * KiB, 80, catalog_gpu::a100_40gb};
/// A100 80 GB: 79.15 GiB (PyTorch OOM messages on A100-SXM4-80GB).
inline constexpr device a100_80gb{"A100 80GB", gib(79.15), default_context, 8 * MiB + 128 * KiB, 80, catalog_gpu::a100_80gb};
/// H100 80 GB HBM3 (SXM5), measured (benchmarks/accuracy/reference/pytorch-2.11-cuda-h100-80gb-hbm3.json
/// and cuda-h100/real-libraries-h100.json, 2026-11-24, PyTorch 2.11 + CUDA 13.0 + cuDNN 9.19,
/// driver 580.159):
///  * capacity: torch.cuda.mem_get_info()'s total, 85,017,493,504 B ("mem_get_info_total_bytes");
///  * context: what a training process holds outside the caching allocator once cuBLAS and cuDNN
///    are loaded (device_used - memory_reserved()): 766.81 MiB in 14 of the 21 real-library
///    processes, 768.81-770.81 MiB in 6 (the 77-case file's fresh processes: 747.6-765.6 MiB
///    above their reserved peak; its one-thread context probe, no autograd thread: 723 MB);
///  * cuBLAS workspace: 32 MiB per handle inside the allocator (probe "cublas": the first
///    matmul's allocation; two handles in a training step: the main thread and autograd's device
///    thread, the traces' two 33,554,432 B blocks);
///  * inference context: the generate() processes' device_used - memory_reserved(), 706.81 MiB
///    (Qwen2-7B in real-libraries-h100.json and in its expandable twin; TinyLlama's 704.81 MiB):
///    60 MiB under a training process's, the backward's and the optimizer's kernels never loaded
///    (CUDA's lazy module loading; the context probe's stages: 681.6 MiB after the first cuBLAS
///    matmul).
inline constexpr device h100_80gb{"H100 80GB",
                                  85017493504,
                                  766 * MiB + 832 * KiB,
                                  32 * MiB,
                                  90,
                                  catalog_gpu::h100_80gb,
                                  true,
                                  "measured: pytorch-2.11-cuda-h100-80gb-hbm3.json + real-libraries-h100.json (2026-11-24)",
                                  706 * MiB + 832 * KiB};
/// H200 (141 GB HBM3e), measured (benchmarks/accuracy/reference/cuda-h200/real-libraries-h200.json,
/// 2026-11-26, the same PyTorch 2.11 + CUDA 13.0 + cuDNN 9.19 as the H100's files):
///  * capacity: torch.cuda.get_device_properties().total_memory, 150,109,880,320 B;
///  * context: device_used - memory_reserved() = 766.81 MiB in 5 of its 11 processes (768.81 MiB
///    in 4, 770.81 MiB in 2), as on the H100; the cases both files hold agree to the byte in
///    their allocator figures.
inline constexpr device h200{"H200",
                             150109880320,
                             766 * MiB + 832 * KiB,
                             32 * MiB,
                             90,
                             catalog_gpu::h200,
                             true,
                             "measured: cuda-h200/real-libraries-h200.json (2026-11-26)"};
/// GeForce RTX 3090 (24 GB): 23.69 GiB (PyTorch OOM messages).
inline constexpr device rtx3090{"RTX 3090", gib(23.69), default_context, 8 * MiB + 128 * KiB, 86, catalog_gpu::rtx3090};
/// GeForce RTX 4090 (24 GB): 23.65 GiB (PyTorch OOM messages).
inline constexpr device rtx4090{"RTX 4090", gib(23.65), default_context, 8 * MiB + 128 * KiB, 89, catalog_gpu::rtx4090};
/// A nominal 16 GB card (16·10⁹ bytes) for "does it fit in 16 GB" questions.
inline constexpr device generic_16gb{"16 GB GPU", 16 * GB, default_context, 8 * MiB + 128 * KiB, 0, catalog_gpu::generic_16gb};

inline constexpr device all[] = {t4, v100_16gb, v100_32gb, a10, l4, a100_40gb, a100_80gb, h100_80gb, h200, rtx3090, rtx4090};

}  // namespace devices
}  // namespace gpubudget
