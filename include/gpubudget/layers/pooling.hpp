// gpubudget/layers/pooling.hpp — max, average and adaptive (average, max) pooling (1-D, 2-D and 3-D).
//
// PyTorch 1.13: max_pool2d_with_indices keeps its input and the int64 indices (one per output
// element); avg_pool2d and adaptive_avg_pool2d keep their whole input, even for a global 1×1
// pool whose backward needs only the shape (op_rules.md §0.7). PyTorch 2.6: adaptive_avg_pool2d
// keeps nothing, avg_pool2d still keeps its input (op_rules.md 2.6 #3).
// The 1-D pools are the 2-D ones on x.unsqueeze(-2) (ATen Pooling.cpp max_pool1d_with_indices,
// avg_pool1d, adaptive_avg_pool1d: a (1, k) window, then squeeze), so they keep what those keep;
// max_pool1d without grad on the CPU skips the indices (MaxPooling.cpp max_pool1d).
#pragma once
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// nn.MaxPool2d / nn.AvgPool2d on [C, H, W] (`average` selects the latter; the name is the 2-D one, the op all three); with `one_d`,
/// nn.MaxPool1d / nn.AvgPool1d on [C, L]; with `three_d`, nn.MaxPool3d / nn.AvgPool3d on
/// [C, D, H, W] (a square window over H, W, and over D the same unless `kernel_t` / `stride_t` /
/// `padding_t` say otherwise: S3D's MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)); max_pool3d_with_indices
/// keeps its input and the int64 indices, avg_pool3d its input: derivatives.yaml).
struct pool2d_op {
  std::int64_t kernel = {};
  std::int64_t stride = {};
  std::int64_t padding = {};
  flag average = {};
  flag ceil_mode = {};  ///< ceil_mode=True (GoogLeNet's and SqueezeNet's max pools)
  flag one_d = {};
  flag three_d = {};
  std::int64_t kernel_t = {};   ///< 3-D: the window over D (0: `kernel`)
  std::int64_t stride_t = {};   ///< 3-D: the stride over D (0: `stride`)
  std::int64_t padding_t = -1;  ///< 3-D: the padding over D (-1: `padding`)
  constexpr int spatial_dims() const { return one_d ? 1 : three_d ? 3 : 2; }
  /// The window, stride and padding over per-sample dimension d (1: D of a 3-D pool).
  constexpr std::int64_t kernel_of(int d) const { return three_d && d == 1 && kernel_t > 0 ? kernel_t : kernel; }
  constexpr std::int64_t stride_of(int d) const { return three_d && d == 1 && stride_t > 0 ? stride_t : stride; }
  constexpr std::int64_t padding_of(int d) const { return three_d && d == 1 && padding_t >= 0 ? padding_t : padding; }
  constexpr shape output_shape(const shape& in) const {
    if (in.rank != spatial_dims() + 1 || (one_d && three_d)) detail::tensor_rank_unsupported();
    shape out = in;
    for (int d = 1; d < in.rank; ++d) out[d] = output_size(in, d);
    return out;
  }
  constexpr std::int64_t output_size(const shape& in, int d) const {
    const auto k = kernel_of(d), s = stride_of(d), p = padding_of(d);
    if (k <= 0) detail::kernel_size_must_be_positive();
    if (s <= 0) detail::stride_must_be_positive();
    if (p < 0) detail::invalid_layer_argument();
    if (2 * p > k) detail::require_input(false, detail::pooling_padding_over_half_the_kernel, p, in);
    // (in + 2p - k) / s + 1 truncates towards zero: a window past the map would still give 1
    if (in[d] + 2 * p < k) detail::require_input(false, detail::pooling_window_larger_than_padded_input, k, detail::padded(in, p));
    auto n = (in[d] + 2 * p - k + (ceil_mode ? s - 1 : 0)) / s + 1;
    // ATen's pooling_output_shape: with ceil_mode the last window must start inside the input or its left padding
    if (ceil_mode && (n - 1) * s >= in[d] + p) --n;
    return n;
  }
};

template <>
struct op_traits<pool2d_op> {
  static constexpr const char* name(const pool2d_op& op) { return op.average ? "avg_pool" : "max_pool"; }
  static constexpr detail::value lower(detail::layer_ctx& c, const pool2d_op& op, const detail::value& x) {
    const shape out = op.output_shape(x.s);
    const bool no_indices = op.average || (op.one_d && c.s.no_grad && c.s.on_cpu());
    const auto indices = no_indices ? 0 : bytes_of(checked_mul(c.s.batch, out.numel()), dtype::int64);
    // CPU autocast runs max_pool3d and avg_pool3d in fp32 (autocast_mode.cpp's CPU fp32 list;
    // measured on the 2.6 CPU: a bf16 x is kept as its fp32 copy, the output fp32)
    detail::value xin = detail::cast_to(c.s, x, op.three_d ? c.s.types.cpu_fp32_op(x.type) : x.type);
    detail::value y = detail::pointwise(c.s, xin, out, xin.type, detail::keeps::input, indices);
    c.s.release(xin);
    return y;
  }
  static constexpr std::int64_t flops(const pool2d_op& op, const shape&, const shape& out) {
    std::int64_t window = 1;
    for (int d = 1; d <= op.spatial_dims(); ++d) window *= op.kernel_of(d);
    return window * out.numel();
  }
};

constexpr layer max_pool2d(std::int64_t kernel, stride s, padding p = padding(0)) { return as_layer(pool2d_op{kernel, s.value, p.value, false}); }
constexpr layer max_pool2d(std::int64_t kernel) { return max_pool2d(kernel, stride(kernel)); }
constexpr layer avg_pool2d(std::int64_t kernel, stride s, padding p = padding(0)) { return as_layer(pool2d_op{kernel, s.value, p.value, true}); }
constexpr layer avg_pool2d(std::int64_t kernel) { return avg_pool2d(kernel, stride(kernel)); }
/// The same with ceil_mode=True: max_pool2d(3, stride(2), padding(0), ceil_mode) is
/// nn.MaxPool2d(3, 2, ceil_mode=True).
constexpr layer max_pool2d(std::int64_t kernel, stride s, padding p, ceil_mode_t) { return as_layer(pool2d_op{kernel, s.value, p.value, false, true}); }
constexpr layer avg_pool2d(std::int64_t kernel, stride s, padding p, ceil_mode_t) { return as_layer(pool2d_op{kernel, s.value, p.value, true, true}); }

/// nn.MaxPool1d / nn.AvgPool1d on [C, L]: max_pool1d(3, stride(2), padding(1)), max_pool1d(2)
/// (stride = kernel), and the same with ceil_mode.
constexpr layer max_pool1d(std::int64_t kernel, stride s, padding p = padding(0)) { return as_layer(pool2d_op{kernel, s.value, p.value, false, false, true}); }
constexpr layer max_pool1d(std::int64_t kernel) { return max_pool1d(kernel, stride(kernel)); }
constexpr layer avg_pool1d(std::int64_t kernel, stride s, padding p = padding(0)) { return as_layer(pool2d_op{kernel, s.value, p.value, true, false, true}); }
constexpr layer avg_pool1d(std::int64_t kernel) { return avg_pool1d(kernel, stride(kernel)); }
constexpr layer max_pool1d(std::int64_t kernel, stride s, padding p, ceil_mode_t) { return as_layer(pool2d_op{kernel, s.value, p.value, false, true, true}); }
constexpr layer avg_pool1d(std::int64_t kernel, stride s, padding p, ceil_mode_t) { return as_layer(pool2d_op{kernel, s.value, p.value, true, true, true}); }

/// nn.MaxPool3d / nn.AvgPool3d on [C, D, H, W]: max_pool3d(2) (stride = kernel), max_pool3d(3, stride(2), padding(1)).
constexpr layer max_pool3d(std::int64_t kernel, stride s, padding p = padding(0)) { return as_layer(pool2d_op{kernel, s.value, p.value, false, false, false, true}); }
constexpr layer max_pool3d(std::int64_t kernel) { return max_pool3d(kernel, stride(kernel)); }
constexpr layer avg_pool3d(std::int64_t kernel, stride s, padding p = padding(0)) { return as_layer(pool2d_op{kernel, s.value, p.value, true, false, false, true}); }
constexpr layer avg_pool3d(std::int64_t kernel) { return avg_pool3d(kernel, stride(kernel)); }
/// A 3-D pool whose window over D differs (torchvision's S3D: max_pool3d(3, stride(2), padding(1),
/// kernel_t(1), stride_t(1), padding_t(0)) is nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1))).
constexpr layer max_pool3d(std::int64_t kernel, stride s, padding p, kernel_t kt, stride_t st, padding_t pt) {
  return as_layer(pool2d_op{kernel, s.value, p.value, false, false, false, true, kt.value, st.value, pt.value});
}
constexpr layer avg_pool3d(std::int64_t kernel, stride s, padding p, kernel_t kt, stride_t st, padding_t pt) {
  return as_layer(pool2d_op{kernel, s.value, p.value, true, false, false, true, kt.value, st.value, pt.value});
}

/// nn.AdaptiveAvgPool2d((out_h, out_w)) on [C, H, W]; out_h 0: nn.AdaptiveAvgPool1d(out_w) on
/// [C, L] (adaptive_avg_pool2d on [C, 1, L] with (1, out_w), then squeezed); out_d > 0:
/// nn.AdaptiveAvgPool3d((out_d, out_h, out_w)) on [C, T, H, W]; `maximum`: the same shapes for
/// nn.AdaptiveMaxPool2d / nn.AdaptiveMaxPool1d.
struct adaptive_pool_op {
  std::int64_t out_h = {};
  std::int64_t out_w = {};
  flag maximum = {};
  std::int64_t out_d = {};
  constexpr int input_rank() const { return out_d > 0 ? 4 : out_h == 0 ? 2 : 3; }
  constexpr shape output_shape(const shape& in) const {
    if (in.rank != input_rank()) detail::tensor_rank_unsupported();
    if (out_d < 0 || out_h < 0 || out_w <= 0 || (out_d > 0 && out_h == 0)) detail::invalid_layer_argument();
    if (out_d > 0) return make_shape(in[0], out_d, out_h, out_w);
    return out_h == 0 ? make_shape(in[0], out_w) : make_shape(in[0], out_h, out_w);
  }
};

template <>
struct op_traits<adaptive_pool_op> {
  static constexpr const char* name(const adaptive_pool_op& op) { return op.maximum ? "adaptive_max_pool" : "adaptive_avg_pool"; }
  static constexpr detail::value lower(detail::layer_ctx& c, const adaptive_pool_op& op, const detail::value& x) {
    if (op.out_d > 0 && c.s.types.cpu_fp32_op(x.type) != x.type) {  // CPU autocast's fp32 list: adaptive_avg_pool3d
      detail::value xin = detail::cast_to(c.s, x, dtype::fp32);
      detail::value y = lower(c, op, xin);
      c.s.release(xin);
      return y;
    }
    const shape out = op.output_shape(x.s);
    // adaptive_max_pool2d keeps its input and the int64 indices of each output element
    // (derivatives.yaml: self, result1; measured on the 2.6 CPU, fp32 and autocast bf16:
    // x[2,16,8,8] -> [2,16,3,3] keeps x and 2,304 B of indices; the 1-D pool the unsqueezed input)
    if (op.maximum) return detail::pointwise(c.s, x, out, x.type, detail::keeps::input, bytes_of(checked_mul(c.s.batch, out.numel()), dtype::int64));
    // 1.13 keeps the input; 2.x nothing for a 1x1 output (op_rules.md 2.6 #3: x[2,32,32,32] saved
    // 256K -> 0; temporal_64_128_256_b2_t5 saved -1,484,816 B): that is mean(-1, -2) on any device
    // but XPU (AdaptiveAveragePooling.cpp), and mean saves nothing in 2.x (#2). Other outputs run
    // _adaptive_avg_pool2d, whose backward takes the input (derivatives.yaml). The 3-D pool
    // likewise (AdaptiveAveragePooling3d.cpp; measured on the 2.6 CPU: x[2,8,4,6,6] to 1 keeps
    // nothing, MeanBackward1; to (1, 2, 2) keeps x; 1.13 taken as the 2-D pool, not measured).
    const bool global = op.out_d <= 1 && op.out_h <= 1 && op.out_w == 1;
    const auto keeps = c.s.torch2() && global ? detail::keeps::nothing : detail::keeps::input;
    return detail::pointwise(c.s, x, out, x.type, keeps);
  }
  static constexpr std::int64_t flops(const adaptive_pool_op&, const shape& in, const shape&) { return in.numel(); }
};

constexpr layer adaptive_avg_pool2d(std::int64_t out_h, std::int64_t out_w) {
  if (out_h <= 0) detail::invalid_layer_argument();  // 0 is the 1-D pool's mark
  return as_layer(adaptive_pool_op{out_h, out_w});
}
/// nn.AdaptiveAvgPool1d(out) on [C, L].
constexpr layer adaptive_avg_pool1d(std::int64_t out) { return as_layer(adaptive_pool_op{0, out}); }
/// nn.AdaptiveAvgPool3d((out_d, out_h, out_w)) on [C, T, H, W] (torchvision's video ResNets: 1, 1, 1).
constexpr layer adaptive_avg_pool3d(std::int64_t out_d, std::int64_t out_h, std::int64_t out_w) {
  if (out_d <= 0 || out_h <= 0) detail::invalid_layer_argument();  // 0 marks the 2-D and 1-D pools
  return as_layer(adaptive_pool_op{out_h, out_w, false, out_d});
}
/// nn.AdaptiveMaxPool2d((out_h, out_w)) on [C, H, W] (return_indices=False): keeps its input and
/// int64 indices, one per output element.
constexpr layer adaptive_max_pool2d(std::int64_t out_h, std::int64_t out_w) {
  if (out_h <= 0) detail::invalid_layer_argument();
  return as_layer(adaptive_pool_op{out_h, out_w, true});
}
/// nn.AdaptiveMaxPool1d(out) on [C, L].
constexpr layer adaptive_max_pool1d(std::int64_t out) { return as_layer(adaptive_pool_op{0, out, true}); }

}  // namespace gpubudget
