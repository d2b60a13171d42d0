// gpubudget/layers/norm.hpp — batch, layer and group normalization.
//
// PyTorch 1.13 (native_batch_norm / native_layer_norm / native_group_norm): the node saves the
// input plus per-row (per-channel for batch norm) fp32 statistics: mean and inverse std.
// Autocast runs layer_norm and group_norm in fp32 and batch_norm in the input's type.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// nn.BatchNorm1d/2d/3d over the channel dimension (dimension 0 of the per-sample shape).
constexpr layer batch_norm() { layer l{}; l.kind = op::batch_norm; return l; }
/// nn.LayerNorm over the last dimension.
constexpr layer layer_norm() { layer l{}; l.kind = op::layer_norm; return l; }
/// nn.GroupNorm(groups, channels) over dimension 0.
constexpr layer group_norm(std::int64_t num_groups) { layer l{}; l.kind = op::group_norm; l.a[0] = num_groups; return l; }

namespace detail::rules {

constexpr value lower_batch_norm(layer_ctx& c, const value& x) {
  auto& s = c.s;
  const auto ch = x.s[0];
  c.add_param(ch);
  c.add_param(ch);
  // running_mean, running_var (fp32) and num_batches_tracked (int64 scalar)
  if (c.first_use) c.buffer_bytes += 2 * ch * 4 + 8;
  // CPU backward holds one more input-sized temporary besides grad_input (op_rules.md §1)
  value y = with_params(c, x, x.s, x.type, 2 * ch, true, 0, 0, c.cpu() ? s.bytes_of_value(x) : 0);
  if (auto n = s.record_of(y); n >= 0) {
    s.save_new(n, ch * 4);  // save_mean [C] fp32
    s.save_new(n, ch * 4);  // save_invstd [C] fp32
    // running_mean and running_var are saved too: resident buffers, so they count as saved
    // bytes but allocate nothing
    for (int k = 0; k < 2; ++k) {
      value r{s.allocate(ch * 4, true), {}, dtype::fp32, false};
      s.save(n, r);
      s.release(r);
    }
  }
  return y;
}

constexpr value lower_layer_norm(layer_ctx& c, const value& x) {
  const auto width = x.s.last();
  c.add_param(width);
  c.add_param(width);
  value xin = cast_to(c.s, x, c.fp32_op_type(x.type));
  const auto rows = checked_mul(c.s.batch, x.s.numel() / width);
  // mean and rstd: one fp32 per normalized row each, saved as two tensors
  value y = with_params(c, xin, x.s, xin.type, 2 * width, true);
  if (auto n = c.s.record_of(y); n >= 0) { c.s.save_new(n, rows * 4); c.s.save_new(n, rows * 4); }
  c.s.release(xin);
  return y;
}

constexpr value lower_group_norm(layer_ctx& c, const value& x) {
  const auto ch = x.s[0], g = c.L.a[0];
  if (g <= 0) invalid_layer_argument();
  if (ch % g != 0) channels_not_divisible_by_groups();
  c.add_param(ch);
  c.add_param(ch);
  value xin = cast_to(c.s, x, c.fp32_op_type(x.type));
  value y = with_params(c, xin, x.s, xin.type, 2 * ch, true);
  if (auto n = c.s.record_of(y); n >= 0) { c.s.save_new(n, c.s.batch * g * 4); c.s.save_new(n, c.s.batch * g * 4); }
  c.s.release(xin);
  return y;
}

}  // namespace detail::rules
}  // namespace gpubudget
