// gpubudget/probe/cuda_libraries.hpp — cuBLAS and cuDNN workspace probes on top of cuda_device.
// Link with CUDA::cublas. The cuDNN part is compiled only when GPUBUDGET_PROBE_HAVE_CUDNN is
// defined (cmake/probes.cmake defines it on the target when it finds cudnn.h and libcudnn);
// define it the same way in every translation unit of a program.
//
// cuDNN: uses the legacy convolution API (cudnnGetConvolution*Algorithm_v7 and
// cudnnGetConvolution*WorkspaceSize), still shipped in cuDNN 9 and deprecated there; PyTorch
// 2.x may choose engines through the cuDNN graph API instead, so treat these sizes as the
// legacy path's answer for the shape.
#pragma once
#include <cublas_v2.h>
#if defined(GPUBUDGET_PROBE_HAVE_CUDNN)
#include <cudnn.h>
#endif

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <gpubudget/probe/cuda_device.hpp>

namespace gpubudget::probe::cuda {

inline void check_cublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw cuda_error(std::string(call) + " failed: " + cublasGetStatusString(s));
}

/// Device memory owned for the duration of a probe.
struct device_buffer {
  void* p = nullptr;
  explicit device_buffer(std::size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { (void)cudaFree(p); }
};

/// Free-memory drops of cublasCreate and of the first GEMM on the current device.
inline cublas_workspace_info measure_cublas() {
  constexpr int n = 256;
  constexpr std::size_t matrix_bytes = sizeof(float) * n * n;
  cublas_workspace_info info;
  const std::int64_t f0 = current_memory().free;
  cublasHandle_t h = nullptr;
  check_cublas(cublasCreate(&h), "cublasCreate");
  struct destroy {
    cublasHandle_t h;
    ~destroy() { (void)cublasDestroy(h); }
  } guard{h};
  const std::int64_t f1 = current_memory().free;
  device_buffer a(matrix_bytes), b(matrix_bytes), c(matrix_bytes);
  check(cudaMemset(a.p, 0, matrix_bytes), "cudaMemset");
  check(cudaMemset(b.p, 0, matrix_bytes), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::int64_t f2 = current_memory().free;
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, static_cast<const float*>(a.p), n,
                           static_cast<const float*>(b.p), n, &beta, static_cast<float*>(c.p), n),
               "cublasSgemm");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::int64_t f3 = current_memory().free;
  info.available = true;
  info.handle_bytes = f0 - f1;
  info.first_gemm_bytes = f2 - f3;
  info.note = "cublasCreate, then one 256x256 SGEMM";
  return info;
}

#if defined(GPUBUDGET_PROBE_HAVE_CUDNN)

inline void check_cudnn(cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS) throw cuda_error(std::string(call) + " failed: " + cudnnGetErrorString(s));
}

/// Owns a cuDNN object; `Destroy` is its cudnnDestroy* function.
template <class T, cudnnStatus_t (*Destroy)(T)>
struct cudnn_owned {
  T v{};
  cudnn_owned() = default;
  cudnn_owned(const cudnn_owned&) = delete;
  cudnn_owned& operator=(const cudnn_owned&) = delete;
  ~cudnn_owned() {
    if (v) (void)Destroy(v);
  }
};

namespace detail {
inline cudnnDataType_t cudnn_type(conv_dtype t) {
  switch (t) {
    case conv_dtype::fp32: return CUDNN_DATA_FLOAT;
    case conv_dtype::fp16: return CUDNN_DATA_HALF;
    case conv_dtype::bf16: return CUDNN_DATA_BFLOAT16;
  }
  return CUDNN_DATA_FLOAT;
}

/// Workspace of the first usable algorithm in heuristic order, and the largest over all usable.
template <class Perf>
std::optional<std::pair<Perf, std::int64_t>> rank(const Perf* perf, int count) {
  std::optional<std::pair<Perf, std::int64_t>> best;
  std::int64_t largest = 0;
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (!best) best.emplace(perf[i], 0);
    if (static_cast<std::int64_t>(perf[i].memory) > largest) largest = static_cast<std::int64_t>(perf[i].memory);
  }
  if (best) best->second = largest;
  return best;
}

/// The input x, filter w, output y and convolution descriptors of one conv_shape, set as
/// PyTorch sets them; y's shape is the one cuDNN computes for x, w and the convolution.
struct conv_descriptors {
  cudnn_owned<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor> x, y;
  cudnn_owned<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor> w;
  cudnn_owned<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor> conv;

  explicit conv_descriptors(const conv_shape& s) {
    const cudnnDataType_t dt = cudnn_type(s.dtype);
    // As PyTorch's ConvolutionDescriptor::set (aten/src/ATen/cudnn/Descriptors.h): fp16 computes
    // in fp32 with CUDNN_TENSOR_OP_MATH, fp32 keeps CUDNN_DEFAULT_MATH (TF32 allowed). bf16 also
    // computes in fp32 here: cuDNN's documented pseudo-bf16 configuration for the legacy API.
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    check_cudnn(cudnnCreateTensorDescriptor(&x.v), "cudnnCreateTensorDescriptor");
    check_cudnn(cudnnCreateTensorDescriptor(&y.v), "cudnnCreateTensorDescriptor");
    check_cudnn(cudnnCreateFilterDescriptor(&w.v), "cudnnCreateFilterDescriptor");
    check_cudnn(cudnnCreateConvolutionDescriptor(&conv.v), "cudnnCreateConvolutionDescriptor");
    check_cudnn(cudnnSetTensor4dDescriptor(x.v, CUDNN_TENSOR_NCHW, dt, s.n, s.c, s.h, s.w), "cudnnSetTensor4dDescriptor");
    check_cudnn(cudnnSetFilter4dDescriptor(w.v, dt, CUDNN_TENSOR_NCHW, s.k, s.c / s.groups, s.r, s.s),
                "cudnnSetFilter4dDescriptor");
    check_cudnn(cudnnSetConvolution2dDescriptor(conv.v, s.pad_h, s.pad_w, s.stride_h, s.stride_w, s.dilation_h,
                                                s.dilation_w, CUDNN_CROSS_CORRELATION, compute),
                "cudnnSetConvolution2dDescriptor");
    check_cudnn(cudnnSetConvolutionGroupCount(conv.v, s.groups), "cudnnSetConvolutionGroupCount");
    check_cudnn(cudnnSetConvolutionMathType(conv.v, s.dtype == conv_dtype::fp32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH),
                "cudnnSetConvolutionMathType");
    int on = 0, oc = 0, oh = 0, ow = 0;
    check_cudnn(cudnnGetConvolution2dForwardOutputDim(conv.v, x.v, w.v, &on, &oc, &oh, &ow),
                "cudnnGetConvolution2dForwardOutputDim");
    check_cudnn(cudnnSetTensor4dDescriptor(y.v, CUDNN_TENSOR_NCHW, dt, on, oc, oh, ow), "cudnnSetTensor4dDescriptor");
  }
};

/// One direction's cuDNN query pair: cudnnGetConvolution*Algorithm_v7 and
/// cudnnGetConvolution*WorkspaceSize, which take the same three descriptors A, B, C in the
/// same order (forward: x, w, y; backward data: w, y, x; backward filter: x, y, w).
template <class A, class B, class C, class Perf>
using find_algorithms = cudnnStatus_t (*)(cudnnHandle_t, A, B, cudnnConvolutionDescriptor_t, C, int, int*, Perf*);
template <class A, class B, class C, class Algo>
using workspace_size = cudnnStatus_t (*)(cudnnHandle_t, A, B, cudnnConvolutionDescriptor_t, C, Algo, std::size_t*);

/// A direction's workspace: that of the first usable algorithm in heuristic order (`chosen`)
/// and the largest over all usable ones.
struct direction_workspace {
  std::int64_t chosen = 0, largest = 0;
};

/// Asks `find` for up to Count algorithms and `size` for the first usable one's workspace;
/// `direction` names the direction in the error when none is usable.
template <int Count, class A, class B, class C, class Perf, class Algo>
direction_workspace query_workspace(cudnnHandle_t h, A a, B b, cudnnConvolutionDescriptor_t conv, C c,
                                    find_algorithms<A, B, C, Perf> find, const char* find_call,
                                    workspace_size<A, B, C, Algo> size, const char* size_call,
                                    const char* direction, const conv_shape& s) {
  Perf perf[Count];
  int got = 0;
  check_cudnn(find(h, a, b, conv, c, Count, &got, perf), find_call);
  const auto best = rank(perf, got);
  if (!best) throw cuda_error(std::string("cuDNN: no usable ") + direction + " algorithm for " + std::string(s.name));
  std::size_t bytes = 0;
  check_cudnn(size(h, a, b, conv, c, best->first.algo, &bytes), size_call);
  return {static_cast<std::int64_t>(bytes), best->second};
}
}  // namespace detail

/// cuDNN workspace sizes for one convolution (forward, backward data, backward filter).
inline conv_workspace_info measure_conv_workspace(cudnnHandle_t h, const conv_shape& s) {
  const detail::conv_descriptors d(s);
  const auto fwd = detail::query_workspace<CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
      h, d.x.v, d.w.v, d.conv.v, d.y.v, cudnnGetConvolutionForwardAlgorithm_v7, "cudnnGetConvolutionForwardAlgorithm_v7",
      cudnnGetConvolutionForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize", "forward", s);
  const auto bwd_data = detail::query_workspace<CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
      h, d.w.v, d.y.v, d.conv.v, d.x.v, cudnnGetConvolutionBackwardDataAlgorithm_v7,
      "cudnnGetConvolutionBackwardDataAlgorithm_v7", cudnnGetConvolutionBackwardDataWorkspaceSize,
      "cudnnGetConvolutionBackwardDataWorkspaceSize", "backward-data", s);
  const auto bwd_filter = detail::query_workspace<CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>(
      h, d.x.v, d.y.v, d.conv.v, d.w.v, cudnnGetConvolutionBackwardFilterAlgorithm_v7,
      "cudnnGetConvolutionBackwardFilterAlgorithm_v7", cudnnGetConvolutionBackwardFilterWorkspaceSize,
      "cudnnGetConvolutionBackwardFilterWorkspaceSize", "backward-filter", s);
  conv_workspace_info info;
  info.forward = fwd.chosen, info.forward_max = fwd.largest;
  info.backward_data = bwd_data.chosen, info.backward_data_max = bwd_data.largest;
  info.backward_filter = bwd_filter.chosen, info.backward_filter_max = bwd_filter.largest;
  info.available = true;
  info.note = "cuDNN legacy API, heuristic order (_v7)";
  return info;
}

#endif  // GPUBUDGET_PROBE_HAVE_CUDNN

/// The library step for run_context_child_if_requested(): cuBLAS handle + first GEMM, and a
/// cuDNN handle when built with cuDNN. Returns their total free-memory drop.
inline std::optional<std::int64_t> first_library_calls(int /*ordinal*/) {
  const cublas_workspace_info cb = measure_cublas();
  std::int64_t total = cb.handle_bytes + cb.first_gemm_bytes;
#if defined(GPUBUDGET_PROBE_HAVE_CUDNN)
  const std::int64_t before = current_memory().free;
  cudnn_owned<cudnnHandle_t, cudnnDestroy> h;
  check_cudnn(cudnnCreate(&h.v), "cudnnCreate");
  total += before - current_memory().free;
#endif
  return total;
}

/// cuda_device with the cuBLAS (and, if built with it, cuDNN) workspace queries.
class cuda_device_with_libraries : public cuda_device {
 public:
  using cuda_device::cuda_device;

  [[nodiscard]] cublas_workspace_info cublas_workspace() override {
    select();
    return measure_cublas();
  }

  [[nodiscard]] conv_workspace_info conv_workspace(const conv_shape& s) override {
#if defined(GPUBUDGET_PROBE_HAVE_CUDNN)
    select();
    if (!cudnn_.v) check_cudnn(cudnnCreate(&cudnn_.v), "cudnnCreate");
    return measure_conv_workspace(cudnn_.v, s);
#else
    conv_workspace_info r = device::conv_workspace(s);
    r.note = "built without cuDNN (cudnn.h not found at configure time)";
    return r;
#endif
  }

#if defined(GPUBUDGET_PROBE_HAVE_CUDNN)
 private:
  cudnn_owned<cudnnHandle_t, cudnnDestroy> cudnn_;
#endif
};

}  // namespace gpubudget::probe::cuda
