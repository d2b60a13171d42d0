// gpubudget/layers/norm.hpp — batch, instance, layer and group normalization.
//
// PyTorch 1.13 (native_batch_norm / native_layer_norm / native_group_norm): the node saves the
// input plus per-row (per-channel for batch norm) fp32 statistics: mean and inverse std.
// Autocast runs layer_norm and group_norm in fp32 and batch_norm in the input's type.
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// nn.BatchNorm1d/2d/3d over the channel dimension (dimension 0 of the per-sample shape).
struct batch_norm_op {};

template <>
struct op_traits<batch_norm_op> {
  static constexpr const char* name = "batch_norm";
  static constexpr detail::value lower(detail::layer_ctx& c, const batch_norm_op&, const detail::value& x) {
    auto& s = c.s;
    const auto ch = x.s[0];
    c.add_param(ch);
    c.add_param(ch);
    // running_mean, running_var (fp32) and num_batches_tracked (int64 scalar)
    if (c.first_use) c.buffer_bytes += 2 * ch * 4 + 8;
    // CPU backward holds one more input-sized temporary besides grad_input (op_rules.md §1)
    detail::value y = detail::with_params(c, x, x.s, x.type, 2 * ch, true, 0, 0, c.cpu() ? s.bytes_of_value(x) : 0, 0, 0, false, ch);
    if (auto n = s.record_of(y); n >= 0) {
      s.save_new(n, ch * 4, 2, true);  // save_mean and save_invstd [C] fp32: per channel, not per sample
      // running_mean and running_var are saved too: resident buffers, so they count as saved
      // bytes but allocate nothing
      s.save_resident(n, ch * 4, 2);
    }
    return y;
  }
};

/// nn.LayerNorm over the last dimension; `no_bias`: a weight only (nn.LayerNorm(bias=False),
/// nanoGPT's LayerNorm with bias=False: F.layer_norm(x, shape, weight, None)), whose backward
/// makes no bias gradient.
struct layer_norm_op {
  flag no_bias = false;
};

template <>
struct op_traits<layer_norm_op> {
  static constexpr const char* name = "layer_norm";
  static constexpr detail::value lower(detail::layer_ctx& c, const layer_norm_op& op, const detail::value& x) {
    const auto width = x.s.last(), bias = op.no_bias ? 0 : width;
    c.add_param(width);
    if (bias) c.add_param(bias);
    detail::value xin = detail::cast_to(c.s, x, c.fp32_op_type(x.type));
    const auto rows = checked_mul(c.s.batch, x.s.numel() / width);
    // mean and rstd: one fp32 per normalized row each, saved as two tensors
    detail::value y = detail::with_params(c, xin, x.s, xin.type, width + bias, true, 0, 0, 0, 0, 0, false, bias);
    const auto n = c.s.record_of(y);
    if (n >= 0) c.s.save_new(n, rows * 4, 2);
    // layer_norm_cuda / layer_norm_cpu and their backward take input.expect_contiguous(): a
    // transposed input is copied, the copy alive beside the output (op_rules.md CT10)
    if (xin.strided) c.s.transient(c.s.bytes_of_value(xin)), c.s.backward_temp(n, c.s.bytes_of_value(xin));
    c.s.release(xin);
    return y;
  }
};

/// nn.GroupNorm(groups, channels) over dimension 0.
struct group_norm_op {
  std::int64_t groups = {};
};

template <>
struct op_traits<group_norm_op> {
  static constexpr const char* name = "group_norm";
  static constexpr detail::value lower(detail::layer_ctx& c, const group_norm_op& op, const detail::value& x) {
    const auto ch = x.s[0], g = op.groups;
    if (g <= 0) detail::invalid_layer_argument();
    if (ch % g != 0) detail::channels_not_divisible_by_groups();
    c.add_param(ch);
    c.add_param(ch);
    detail::value xin = detail::cast_to(c.s, x, c.fp32_op_type(x.type));
    detail::value y = detail::with_params(c, xin, x.s, xin.type, 2 * ch, true, 0, 0, 0, 0, 0, false, ch);
    if (auto n = c.s.record_of(y); n >= 0) c.s.save_new(n, c.s.batch * g * 4, 2);
    c.s.release(xin);
    return y;
  }
};

/// nn.InstanceNorm1d/2d/3d(C, affine) (track_running_stats=False): F.instance_norm runs batch
/// norm on the input viewed as [1, B·C, ...], so the node keeps the input and fp32 mean and
/// invstd per (sample, channel); with `affine`, also the weight repeated over the batch (a new
/// [B·C] tensor; the bias repeat is a temporary). Measured, PyTorch 1.13 CPU,
/// saved_tensors_hooks on x[2, 4, 8, 8]: 2112 B saved (2048 input + 2 · 32), 2144 B with affine.
struct instance_norm_op {
  flag affine = false;
};

template <>
struct op_traits<instance_norm_op> {
  static constexpr const char* name = "instance_norm";
  static constexpr detail::value lower(detail::layer_ctx& c, const instance_norm_op& op, const detail::value& x) {
    const auto ch = x.s[0], per_channel = checked_mul(c.s.batch, ch) * 4;  // [B·C] fp32
    if (op.affine) c.add_param(ch), c.add_param(ch);
    detail::value xin = detail::cast_to(c.s, x, c.fp32_op_type(x.type));  // autocast's fp32 list
    // CPU backward holds one more input-sized temporary (batch_norm's, op_rules.md §1)
    detail::value y = detail::with_params(c, xin, x.s, xin.type, op.affine ? 2 * ch : 0, true, 0, op.affine ? per_channel : 0,
                                          c.cpu() ? c.s.bytes_of_value(x) : 0);
    if (auto n = c.s.record_of(y); n >= 0) c.s.save_new(n, per_channel, op.affine ? 3 : 2);
    c.s.release(xin);
    return y;
  }
};

constexpr layer batch_norm() { return as_layer(batch_norm_op{}); }
constexpr layer instance_norm(bool affine = false) { return as_layer(instance_norm_op{affine}); }
constexpr layer layer_norm() { return as_layer(layer_norm_op{}); }
constexpr layer layer_norm(no_bias_t) { return as_layer(layer_norm_op{true}); }
constexpr layer group_norm(std::int64_t num_groups) { return as_layer(group_norm_op{num_groups}); }

}  // namespace gpubudget
