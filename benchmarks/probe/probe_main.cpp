// probe_main.cpp — measure the CUDA device this runs on and check a budget against it.
// Prints markdown tables: device, CUDA context cost (default / LAZY / EAGER module loading),
// cudaMalloc granularity next to PyTorch's caching-allocator rounding, cuBLAS/cuDNN workspace,
// and a budget check of a built-in example.
//
// Usage: gpubudget_probe [--device N] [--no-context]
// Exit: 0 budget fits, 1 it does not, 2 a probe failed, 77 no CUDA device (CTest skip code).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string_view>

#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/probe/cuda_libraries.hpp>
#include <gpubudget/budget_probe.hpp>
#include <gpubudget/probe/run_probes.hpp>

namespace probe = gpubudget::probe;

namespace {

// Built-in example: torchvision vit_b_16, 224x224, batch 32, AMP bf16, AdamW (foreach), budgeted
// by gpubudget at compile time; the check allocates it category by category.
constexpr auto example_budget =
    gpubudget::budget_totals(gpubudget::models::vit_b_16(), gpubudget::training{.batch = 32, .precision = gpubudget::amp_bf16},
                             gpubudget::devices::a100_40gb);

probe::probe_plan example_plan(probe::compute_capability cc) {
  probe::probe_plan plan;
  plan.budget = probe::budget_categories(example_budget);
  (void)cc;
  // Convolutions from torchvision resnet50 (conv1: 3->64, 7x7, stride 2, padding 3; layer1:
  // 64->64, 3x3, padding 1 at 56x56) at batch 32. The 64 MiB estimates are an illustrative
  // flat term, standing in for the caller's own workspace estimate.
  const probe::conv_shape stem{.name = "resnet50.conv1", .n = 32, .c = 3, .h = 224, .w = 224,
                               .k = 64, .r = 7, .s = 7, .pad_h = 3, .pad_w = 3, .stride_h = 2, .stride_w = 2};
  const probe::conv_shape block{.name = "resnet50.layer1 3x3", .n = 32, .c = 64, .h = 56, .w = 56,
                                .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .dtype = probe::conv_dtype::fp16};
  plan.convs = {{stem, 64LL << 20}, {block, 64LL << 20}};
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  // When re-run as the context-cost child, measure and exit before anything else touches CUDA.
  if (auto rc = probe::cuda::run_context_child_if_requested(probe::cuda::first_library_calls)) return *rc;

  int ordinal = 0;
  bool context = true;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--device" && i + 1 < argc) {
      ordinal = std::atoi(argv[++i]);
    } else if (a == "--no-context") {
      context = false;
    } else {
      std::fprintf(stderr, "usage: %s [--device N] [--no-context]\n", argv[0]);
      return a == "--help" ? 0 : 2;
    }
  }

  const auto count = probe::cuda::device_count();
  if (count.count <= 0) {
    std::printf("no CUDA device (%s)\n", count.error.empty() ? "cudaGetDeviceCount returned 0" : count.error.c_str());
    return 77;
  }
  if (ordinal < 0 || ordinal >= count.count) {
    std::fprintf(stderr, "--device %d: only %d CUDA device(s)\n", ordinal, count.count);
    return 2;
  }
  try {
    probe::cuda::cuda_device_with_libraries dev(ordinal);
    probe::probe_plan plan = example_plan(dev.capability());
    plan.measure_context = context;
    return probe::run_probes(dev, plan, std::cout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubudget_probe: %s\n", e.what());
    return 2;
  }
}
