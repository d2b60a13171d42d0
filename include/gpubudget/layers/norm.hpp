// gpubudget/layers/norm.hpp — batch, instance, layer and group normalization.
//
// PyTorch 1.13 (native_batch_norm / native_layer_norm / native_group_norm): the node saves the
// input plus per-row (per-channel for batch norm) fp32 statistics: mean and inverse std.
// Autocast runs layer_norm and group_norm in fp32 and batch_norm in the input's type.
#pragma once
#include <gpubudget/detail/layer_input.hpp>
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
      // bytes but allocate nothing; once for a module called twice (one storage: a siamese
      // network's shared trunk, 2.6 CPU: saved +38,400 B at ResNet-18's 4,800 channels when counted per call)
      s.save_resident(n, ch * 4, 2, !c.first_use);
    }
    return y;
  }
};

/// nn.LayerNorm over the last dimension or, `more_dims` > 0, over the last 1 + more_dims
/// (nn.LayerNorm([C, H, W]) on [C, H, W]: weight and bias of that shape, mean and rstd one per
/// sample; measured on the 2.6 CPU, x[2,16,8,8] over [16,8,8] keeps x and two [2,1,1,1] fp32);
/// `no_bias`: a weight only (nn.LayerNorm(bias=False), nanoGPT's LayerNorm with bias=False:
/// F.layer_norm(x, shape, weight, None)), whose backward makes no bias gradient.
struct layer_norm_op {
  flag no_bias = false;
  std::int64_t more_dims = 0;
  flag no_affine = false;  ///< no weight either (elementwise_affine=False): the same saved tensors
};

template <>
struct op_traits<layer_norm_op> {
  static constexpr const char* name = "layer_norm";
  static constexpr detail::value lower(detail::layer_ctx& c, const layer_norm_op& op, const detail::value& x) {
    if (op.more_dims < 0 || op.more_dims >= x.s.rank) detail::require_input(false, detail::layer_norm_over_more_dims_than_the_input_has, op.more_dims + 1, x.s);
    std::int64_t width = 1;
    for (int d = x.s.rank - 1 - static_cast<int>(op.more_dims); d < x.s.rank; ++d) width = checked_mul(width, x.s[d]);
    const auto weight = op.no_affine ? 0 : width, bias = op.no_bias || op.no_affine ? 0 : width;
    if (weight) c.add_param(weight);
    if (bias) c.add_param(bias);
    detail::value xin = detail::cast_to(c.s, x, c.fp32_op_type(x.type));
    const auto rows = checked_mul(c.s.batch, x.s.numel() / width);
    // mean and rstd: one fp32 per normalized row each, saved as two tensors; the input is kept
    // without a weight too (NativeLayerNormBackward0 computes the input's gradient from it)
    detail::value y = detail::with_params(c, xin, x.s, xin.type, weight + bias, true, 0, 0, 0, 0, 0, false, bias);
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
    y.tracked_view = true;  // batch_norm's output viewed back to the input's shape
    return y;
  }
};

/// F.normalize(x, p=2, dim): x / max(‖x‖₂ over `dim`, eps), `dim` a per-sample dimension (0: the
/// channels of [C, H, W], the features of [D]). PyTorch runs it as norm(keepdim) → clamp_min →
/// expand_as → div (torch/nn/functional.py normalize). Measured on the 2.6 CPU (saved_tensors_hooks,
/// x[4,128] and x[2,16,8,8], dim 1): LinalgVectorNormBackward0 keeps x and the norm,
/// ClampMinBackward0 the norm, DivBackward0 x and the clamped norm: two new tensors of x's shape
/// with `dim` 1. CUDA autocast runs linalg_vector_norm with dtype fp32 (autocast_mode.cpp:
/// fp32_set_opt_dtype), which a 16-bit input reduces without a copy (ReduceOpsUtils.h
/// make_reduction: gpu_lowp_to_f32), so the norm is fp32 and x / norm is promoted to fp32; CPU
/// autocast keeps the input's type throughout (measured: a bf16 x keeps bf16 norms and output).
struct normalize_op {
  std::int64_t dim = {};
};

template <>
struct op_traits<normalize_op> {
  static constexpr const char* name = "normalize";
  static constexpr detail::value lower(detail::layer_ctx& c, const normalize_op& op, const detail::value& x) {
    auto& s = c.s;
    detail::require_dimension(op.dim, x.s);
    shape reduced = x.s;
    reduced[static_cast<int>(op.dim)] = 1;
    const dtype t = s.types.fp32_op(x.type);
    detail::value norm = s.make(reduced, t, x.requires_grad);
    const auto n = s.record(norm);
    s.save(n, x);
    s.save(n, norm);
    s.grad_to(n, x);
    detail::value denominator = detail::pointwise(s, norm, reduced, t, detail::keeps::input);  // clamp_min(eps)
    s.release(norm);
    detail::value y = detail::broadcast_divide(s, x, denominator, t);
    s.release(denominator);
    return y;
  }
};

/// F.normalize(x, p=2, dim=dim + 1): dim 0 normalizes channels (or a vector's features).
constexpr layer normalize(std::int64_t dim = 0) { return as_layer(normalize_op{dim}); }

constexpr layer batch_norm() { return as_layer(batch_norm_op{}); }
constexpr layer instance_norm(bool affine = false) { return as_layer(instance_norm_op{affine}); }
constexpr layer layer_norm() { return as_layer(layer_norm_op{}); }
constexpr layer layer_norm(no_bias_t) { return as_layer(layer_norm_op{true}); }
/// nn.LayerNorm over the last `n` per-sample dimensions: layer_norm(over_last(3)) on [C, H, W] is
/// nn.LayerNorm([C, H, W]).
constexpr layer layer_norm(over_last n) {
  if (n.value < 1) detail::invalid_layer_argument();
  return as_layer(layer_norm_op{false, n.value - 1});
}
constexpr layer layer_norm(over_last n, no_bias_t) {
  if (n.value < 1) detail::invalid_layer_argument();
  return as_layer(layer_norm_op{true, n.value - 1});
}
/// nn.LayerNorm(D, elementwise_affine=False) (DiT's norm1 / norm2 before adaLN's modulation):
/// no parameters; autograd keeps what layer_norm() keeps.
constexpr layer layer_norm(no_affine_t) { return as_layer(layer_norm_op{true, 0, true}); }
constexpr layer layer_norm(over_last n, no_affine_t) {
  if (n.value < 1) detail::invalid_layer_argument();
  return as_layer(layer_norm_op{true, n.value - 1, true});
}

/// facebookresearch/ConvNeXt's LayerNorm(data_format="channels_first") over dimension 0 of
/// [C, H, W], written out in elementwise ops: u = x.mean(1, keepdim=True); s = (x - u).pow(2)
/// .mean(1, keepdim=True); x = (x - u) / torch.sqrt(s + eps); weight[:, None, None] * x +
/// bias[:, None, None]. Autograd keeps x − u twice (pow's input and div's numerator, two
/// subtractions), sqrt's output [1, H, W] (div keeps it too) and the normalized x (the weight's
/// product): 3·X + X/C (saved_tensors_hooks, 2026-11-29), where nn.LayerNorm keeps X + 2·X/C.
struct written_layer_norm_op {};

template <>
struct op_traits<written_layer_norm_op> {
  static constexpr const char* name = "written_layer_norm";
  static constexpr detail::value lower(detail::layer_ctx& c, const written_layer_norm_op&, const detail::value& x) {
    using namespace detail;
    auto& s = c.s;
    if (x.s.rank < 2) tensor_rank_unsupported();
    const auto C = x.s[0];
    shape row = x.s;
    row[0] = 1;
    c.add_param(C), c.add_param(C);
    value u = pointwise(s, x, row, x.type, keeps::nothing);  // x.mean(1, keepdim=True)
    value centered = add(s, x, u);  // x - u: nothing kept, the gradient to both
    value squared = pointwise(s, centered, x.s, x.type, keeps::input);  // .pow(2)
    s.release(centered);
    value variance = pointwise(s, squared, row, x.type, keeps::nothing);
    s.release(squared);
    value shifted = pointwise(s, variance, row, x.type, keeps::nothing);  // s + eps
    s.release(variance);
    value deviation = pointwise(s, shifted, row, x.type, keeps::output);  // torch.sqrt
    s.release(shifted);
    value numerator = add(s, x, u);
    s.release(u);
    value normalized = broadcast_divide(s, numerator, deviation, x.type);
    s.release(numerator), s.release(deviation);
    value scaled = broadcast_weighted(c, normalized, C, c.trainable);  // weight[:, None, None] * x keeps x
    s.release(normalized);
    value y = s.make(x.s, x.type, c.records(scaled));  // + bias[:, None, None]
    const auto n = s.record(y);
    s.grad_to(n, scaled, true);
    c.param_grads(n, C, 1);
    s.release(scaled);
    return y;
  }
};

constexpr layer written_layer_norm() { return as_layer(written_layer_norm_op{}); }
constexpr layer group_norm(std::int64_t num_groups) { return as_layer(group_norm_op{num_groups}); }

}  // namespace gpubudget
