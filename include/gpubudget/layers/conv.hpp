// gpubudget/layers/conv.hpp — convolutions (1-D/2-D/3-D, grouped, depthwise, transposed).
//
// Arguments: a[0] spatial dims, a[1] out channels (0 = same as input, for depthwise),
// a[2] kernel, a[3] stride, a[4] padding, a[5] dilation, a[6] groups (-1 = input channels),
// a[7] output padding (transposed). Square kernels: one size for every spatial dimension.
// The autograd node saves the input (and the weight, a parameter); backward allocates the
// input gradient and the weight/bias gradients.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// The convolution's input arrives channels-last-strided (as after a permute + residual add in
/// ConvNeXt blocks); only CPU (oneDNN) transients depend on it.
struct channels_last_input_t {};
inline constexpr channels_last_input_t channels_last_input{};

namespace detail {
constexpr void apply_conv_option(layer& l, stride s) { l.a[3] = s.value; }
constexpr void apply_conv_option(layer& l, padding p) { l.a[4] = p.value; }
constexpr void apply_conv_option(layer& l, dilation d) { l.a[5] = d.value; }
constexpr void apply_conv_option(layer& l, groups g) { l.a[6] = g.value; }
constexpr void apply_conv_option(layer& l, depthwise_t) { l.a[6] = -1; }
constexpr void apply_conv_option(layer& l, output_padding p) { l.a[7] = p.value; }
constexpr void apply_conv_option(layer& l, no_bias_t) { l.bias = false; }
constexpr void apply_conv_option(layer& l, channels_last_input_t) { l.channels_last = true; }

template <class... Opts>
constexpr layer make_conv(op kind, std::int64_t dims, std::int64_t out_channels, std::int64_t kernel, Opts... opts) {
  layer l{};
  l.kind = kind;
  l.a[0] = dims;
  l.a[1] = out_channels;
  l.a[2] = kernel;
  l.a[3] = 1;
  l.a[5] = 1;
  l.a[6] = 1;
  (apply_conv_option(l, opts), ...);
  return l;
}
}  // namespace detail

/// nn.Conv1d/2d/3d(in, out, kernel, stride, padding, dilation, groups, bias).
/// `out_channels` 0 keeps the input's channel count (handy with `depthwise`).
template <class... Opts>
constexpr layer conv1d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return detail::make_conv(op::conv, 1, out_channels, kernel, o...); }
template <class... Opts>
constexpr layer conv2d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return detail::make_conv(op::conv, 2, out_channels, kernel, o...); }
template <class... Opts>
constexpr layer conv3d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return detail::make_conv(op::conv, 3, out_channels, kernel, o...); }
/// nn.ConvTranspose2d.
template <class... Opts>
constexpr layer conv_transpose2d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return detail::make_conv(op::conv_transpose, 2, out_channels, kernel, o...); }
/// Depthwise 2-D convolution (groups = channels), e.g. ConvNeXt's 7×7.
template <class... Opts>
constexpr layer depthwise_conv2d(std::int64_t kernel, Opts... o) { return detail::make_conv(op::conv, 2, 0, kernel, depthwise, o...); }

namespace detail::rules {

struct conv_transients {
  std::int64_t forward = 0, backward = 0;
};

/// Transients of a CPU (oneDNN) convolution beyond its output, input gradient and weight
/// gradient: layout reorders and scratch, as measured in benchmarks/accuracy/op_rules.md §1b
/// (conv_scan.py: 23 shapes, PyTorch 1.13.1, 2 intra-op threads). One rule covers the ordinary
/// convolutions (3×3, 1×1, strided, downsampling; within ~0.3·X of every measurement):
/// forward max(X, Y) + W, backward max(X + Y, W). The first layer (no input gradient) holds
/// about one output; depthwise convs one input; and two measured outliers: a patchifying conv
/// with a weight larger than its output (ViT) keeps ≈4.4·W of scratch per thread, and a
/// depthwise conv fed a channels-last-strided input ≈258·W. On CUDA the equivalent is cuDNN's
/// workspace, budgeted at the device level.
constexpr conv_transients cpu_conv_transients(const sim& s, std::int64_t X, std::int64_t Y, std::int64_t W, std::int64_t in_ch,
                                              std::int64_t grp, std::int64_t k, std::int64_t st, bool input_needs_grad,
                                              bool transposed, bool channels_last) {
  if (s.plan.backend != backend_kind::cpu) return {};
  if (transposed) return {Y * 9 / 2, 5 * Y};
  const bool depthwise_conv = grp == in_ch && grp > 1;
  if (depthwise_conv && channels_last) return {Y / 20, 258 * W};  // independent of H, B, threads
  if (depthwise_conv) return {Y, X};
  if (!input_needs_grad) {
    const bool patchify = k == st && k > 1 && W > Y;
    const auto scratch = W * 44 / 10 * s.plan.cpu_threads;
    return {Y + (W < Y ? W : Y), patchify && scratch > Y ? scratch : Y};
  }
  const auto mx = X > Y ? X : Y;
  return {mx + W, X + Y > W ? X + Y : W};
}

/// A convolution on `x` ([C, spatial...]); `part` selects the parameter key within the layer.
constexpr value conv_op(layer_ctx& c, const value& x, const layer& L, std::int32_t part = 0) {
  const auto dims = L.a[0];
  if (x.s.rank != dims + 1) shape_mismatch_between_layers();
  const auto in_ch = x.s[0];
  const auto out_ch = L.a[1] == 0 ? in_ch : L.a[1];
  const auto k = L.a[2], st = L.a[3], pad = L.a[4], dil = L.a[5];
  const auto grp = L.a[6] == -1 ? in_ch : L.a[6];
  if (k <= 0 || st <= 0 || dil <= 0 || pad < 0 || grp <= 0 || out_ch <= 0) invalid_layer_argument();
  if (in_ch % grp != 0 || out_ch % grp != 0) channels_not_divisible_by_groups();
  shape out = x.s;
  out[0] = out_ch;
  std::int64_t kvol = 1;
  for (int d = 1; d <= dims; ++d) {
    const auto i = x.s[d];
    const auto o = L.kind == op::conv_transpose ? (i - 1) * st - 2 * pad + dil * (k - 1) + L.a[7] + 1
                                                : (i + 2 * pad - dil * (k - 1) - 1) / st + 1;
    if (o <= 0 || (L.kind == op::conv && i + 2 * pad < dil * (k - 1) + 1)) output_size_not_positive();
    out[d] = o;
    kvol = checked_mul(kvol, k);
  }
  const auto weight = checked_mul(checked_mul(in_ch, out_ch / grp), kvol);  // [out, in/g, k..] or [in, out/g, k..]
  const auto bias = L.bias ? out_ch : 0;
  c.add_param(weight);
  c.add_param(bias);
  const dtype t = c.matmul_type(x.type);
  value xin = cast_to(c.s, x, t);
  const auto tr = cpu_conv_transients(c.s, c.s.bytes_of_value(x), c.s.bytes_of_value(out, t), bytes_of(weight, dtype::fp32), in_ch,
                                      grp, k, st, x.requires_grad, L.kind == op::conv_transpose, L.channels_last);
  // convolution_backward takes the input even when only the input's gradient is wanted.
  value y = with_params(c, xin, out, t, weight + bias, true, 0, tr.forward, tr.backward, weight, part);
  c.s.release(xin);
  return y;
}

constexpr value lower_conv(layer_ctx& c, const value& x) { return conv_op(c, x, c.L); }

}  // namespace detail::rules
}  // namespace gpubudget
