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
// With use_dora=True (PEFT's DoRA: dora_conv below) a trainable magnitude per output channel
// rescales the base output and the update.
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
  flag dora = {};  ///< PEFT's use_dora: a trainable magnitude per output channel (dora_conv)
};

namespace detail {
constexpr conv_op lora_conv_base(const lora_conv_op& op) {
  return {op.dims, op.out_channels, op.kernel, op.stride, op.padding, 1, op.groups, 0, op.bias, false, op.channels_last};
}
[[noreturn]] inline void lora_rank_not_a_multiple_of_the_conv_groups() {
  fail("gpubudget: LoRA on a grouped convolution needs a rank that is a multiple of its groups (PEFT: \"support is limited to conv layers "
       "where the rank is divisible by groups\")");
}

/// lora_B(lora_A(xd)) in `c`'s adapter parts 1 and 2 (A: the base's kernel, stride and padding,
/// r outputs; B: 1x1, `groups` as the base's). Consumes xd.
constexpr value lora_conv_update(layer_ctx& c, const lora_conv_op& op, const value& xd, std::int64_t out_channels, std::int64_t groups) {
  layer_ctx ad = c.sub(1);
  value a = convolution(ad, xd, conv_op{op.dims, op.rank, op.kernel, op.stride, op.padding, 1, 1, 0, false, false, op.channels_last}, 0);
  c.s.release(xd);
  value b = convolution(ad, a, conv_op{op.dims, out_channels, 1, 1, 0, 1, groups, 0, false, false, false}, 1);
  c.s.release(a);
  c.absorb(ad, 1);
  return b;
}

/// DoRA's base_result on a convolution: at lora_dropout 0 variants.py passes the base output
/// (dora_given_base_result: less a bias, a new tensor); otherwise base_result=None and dora.py runs
/// conv_fn(dropped x, W, bias=None, ..) again: a frozen convolution of the base's weights (not
/// counted twice), which keeps the dropped x when it needs a gradient.
constexpr value dora_base_result(layer_ctx& c, const lora_conv_op& op, const value& xd, const value& base_out) {
  if (op.dropout > 0) {
    layer_ctx again = c.sub(0, /*counts=*/false);
    conv_op unbiased = lora_conv_base(op);
    unbiased.bias = false;
    return frozen_base(again, [&](layer_ctx& k) { return convolution(k, xd, unbiased, 0); });
  }
  return dora_given_base_result(c.s, base_out, op.bias, c.param_type());
}

/// PEFT's DoRA on a convolution (use_dora=True): peft/tuners/lora/variants.py
/// _DoraConvNdVariant.forward calls dora.py _DoraConvNdLayer.forward (get_lora_weight,
/// get_weight_norm over every dimension but the first):
///     lora_weight = mm(lora_B.weight.view(-1, r), lora_A.weight.view(r, -1)).reshape(W.shape)
///     weight_norm = ||W + scaling·lora_weight.detach()|| per output channel, detached
///     mag_norm_scale = magnitude / weight_norm      # magnitude [1, out, 1, ..]: fp32, trains
///     base_result: dora_base_result
///     result = result + (mag_norm_scale - 1)·base_result + mag_norm_scale·lora_B(lora_A(x))·scaling
/// then _ConvNd.forward's result.to(torch_result_dtype). Consumes xd (the adapters' input) and base_out.
constexpr value dora_conv(layer_ctx& c, const lora_conv_op& op, const value& xd, const value& base_out, std::int64_t groups) {
  auto& s = c.s;
  const auto out = base_out.s[0];
  const auto weight = checked_mul(checked_mul(xd.s[0], out / groups), kernel_volume(lora_conv_base(op)));
  const std::int32_t lora_weight = dora_lora_weight(c, weight, c.matmul_type(c.param_type()), c.param_type());
  value base_result = dora_base_result(c, op, xd, base_out);
  value kept = dora_scaled(s, base_result, out);  // (mag_norm_scale - 1)·base_result
  dora_magnitude(c, s.record_of(kept), out, 3);
  s.release(base_result);
  value b = lora_conv_update(c, op, xd, out, groups);
  value lora = dora_scaled(s, b, out);  // mag_norm_scale·lora_B(lora_A(x))
  s.release(b);
  value scaled = pointwise(s, lora, lora.s, lora.type, keeps::nothing, scalar_operand_saved(s));  // · scaling
  s.release(lora);
  value dora = add(s, kept, scaled);
  s.release(kept), s.release(scaled), s.release(lora_weight);  // DoRA's forward returns
  value y = add(s, base_out, dora);
  s.release(base_out), s.release(dora);
  value back = cast_to(s, y, base_out.type);
  s.release(y);
  return back;
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
    value xa = cast_to(s, x, op.cast_input ? c.param_type() : x.type);
    value xd = detail::dropout_op(s, xa, op.dropout);
    s.release(xa);
    if (op.dora) return dora_conv(c, op, xd, base_out, groups);
    return add_scaled_update(s, base_out, lora_conv_update(c, op, xd, out_channels, groups));
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
/// groups) (groups -1: depthwise; `channels_last`: as conv_op's; `dora`: PEFT's use_dora,
/// dora_conv).
constexpr layer lora_conv(std::int64_t dims, std::int64_t out_channels, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                          std::int64_t rank, std::int64_t dropout_percent = 0, bool bias = true, std::int64_t groups = 1,
                          bool channels_last = false, bool dora = false) {
  return as_layer(lora_conv_op{dims, out_channels, kernel, stride, padding, rank, dropout_percent, bias, true, groups, channels_last, dora});
}

}  // namespace gpubudget
