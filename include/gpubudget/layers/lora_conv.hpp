// gpubudget/layers/lora_conv.hpp — a LoRA adapter on a frozen convolution (PEFT's lora.Conv2d, and
// Conv1d / Conv3d: peft/tuners/lora/layer.py, _ConvNd).
//
// PEFT builds the adapter from the base layer's own geometry:
//     lora_A = Conv(in, r, kernel_size, stride, padding, bias=False)
//     lora_B = Conv(r, out, 1, 1, groups=base_layer.groups, bias=False)
// (a grouped base, PEFT >= 0.15, huggingface/peft#2403: lora_A is a dense convolution, lora_B is
// grouped as the base, and the rank must be a multiple of the groups: PEFT raises otherwise)
// and runs Linear's forward: result = base_layer(x); result = result + lora_B(lora_A(dropout(x))) * scaling.
// What autograd keeps follows from the ops: ConvolutionBackward keeps its input and weight whenever
// it records (op_rules.md 2.6 #26), so the frozen base keeps x once x needs a gradient; lora_A keeps
// the dropped x, lora_B keeps A's output [r, spatial]; the scalar multiply and the add keep nothing.
// The base is frozen (its weight and bias count as parameters that do not train).
#pragma once
#include <cstdint>

#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/conv.hpp>
#include <gpubudget/layers/lora_projection.hpp>

namespace gpubudget {

/// A frozen nn.Conv{1,2,3}d (dilation 1, not transposed; `groups` as conv_op's, -1 depthwise)
/// with a LoRA adapter of rank `rank`: `dropout` in percent on the adapter's input; `bias`: the
/// base has a (frozen) bias; `channels_last`: the base's input is channels-last-strided (conv_op).
struct lora_conv_op {
  std::int64_t dims = {};
  std::int64_t out_channels = {};
  std::int64_t kernel = {};
  std::int64_t stride = {};
  std::int64_t padding = {};
  std::int64_t rank = {};
  std::int64_t dropout = {};
  flag bias = {};
  flag cast_input = true;  ///< PEFT >= 0.15's _cast_input_dtype (lora_projection.hpp)
  std::int64_t groups = 1;
  flag channels_last = {};
};

namespace detail {
constexpr conv_op lora_conv_base(const lora_conv_op& op) {
  return {op.dims, op.out_channels, op.kernel, op.stride, op.padding, 1, op.groups, 0, op.bias, false, op.channels_last};
}
[[noreturn]] inline void lora_rank_not_a_multiple_of_the_conv_groups() {
  fail("gpubudget: LoRA on a grouped convolution needs a rank that is a multiple of its groups (PEFT: \"support is limited to conv layers "
       "where the rank is divisible by groups\")");
}
}  // namespace detail

template <>
struct op_traits<lora_conv_op> {
  static constexpr const char* name = "lora_conv";
  static constexpr detail::value lower(detail::layer_ctx& c, const lora_conv_op& op, const detail::value& x) {
    using namespace detail;
    if (op.dropout < 0 || op.dropout > 100) invalid_layer_argument();
    const conv_op base = lora_conv_base(op);
    value base_out = frozen_base(c, [&](layer_ctx& k) { return convolution(k, x, base, 0); });
    // the rank of the adapted weight [out, in · kernel volume] (a 3-channel stem's 3x3 conv takes r = 8)
    const auto out_channels = base_out.s[0];  // out_channels 0: the input's (conv_op)
    if (op.rank < 1 || op.rank > x.s[0] * kernel_volume(base) || op.rank > out_channels) lora_rank_must_be_positive_and_at_most_the_layer_width();
    const auto groups = op.groups == -1 ? x.s[0] : op.groups;  // lora_B's: the base's
    if (op.rank % groups != 0) lora_rank_not_a_multiple_of_the_conv_groups();
    c.conv_workspace = im2col_bytes(c.s, base, x.s, base_out.s, base_out.type);
    auto& s = c.s;
    layer_ctx ad = c.sub(1);
    value xa = cast_to(s, x, op.cast_input ? c.param_type() : x.type);
    value xd = detail::dropout_op(s, xa, op.dropout);
    s.release(xa);
    value a = convolution(ad, xd, conv_op{op.dims, op.rank, op.kernel, op.stride, op.padding, 1, 1, 0, false, false, op.channels_last}, 0);
    s.release(xd);
    value b = convolution(ad, a, conv_op{op.dims, out_channels, 1, 1, 0, 1, groups, 0, false, false, false}, 1);
    s.release(a);
    c.absorb(ad, 1);
    return add_scaled_update(s, base_out, b);
  }
  /// The base convolution, lora_A (the base's geometry, r outputs) and lora_B (1x1, r inputs,
  /// the base's groups).
  static constexpr std::int64_t flops(const lora_conv_op& op, const shape& in, const shape& out) {
    const auto kvol = detail::kernel_volume(detail::lora_conv_base(op));
    const auto positions = out.numel() / out[0];
    const auto groups = op.groups == -1 ? in[0] : op.groups;
    return 2 * in[0] / groups * kvol * out.numel() + 2 * in[0] * kvol * op.rank * positions + 2 * op.rank / groups * out.numel();
  }
};

/// PEFT's lora.Conv on a frozen nn.Conv{dims}d(in, out_channels, kernel, stride, padding, bias,
/// groups) (groups -1: depthwise; `channels_last`: as conv_op's).
constexpr layer lora_conv(std::int64_t dims, std::int64_t out_channels, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                          std::int64_t rank, std::int64_t dropout_percent = 0, bool bias = true, std::int64_t groups = 1,
                          bool channels_last = false) {
  return as_layer(lora_conv_op{dims, out_channels, kernel, stride, padding, rank, dropout_percent, bias, true, groups, channels_last});
}

}  // namespace gpubudget
