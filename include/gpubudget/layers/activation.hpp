// gpubudget/layers/activation.hpp — activations, softmax and dropout.
//
// What PyTorch 1.13's autograd keeps (tools/autograd/derivatives.yaml; op_rules.md §0, §7):
//   relu, sigmoid, tanh, softmax, log_softmax: the output;  gelu, silu, leaky_relu, elu, relu6
//   (hardtanh), hardswish, hardsigmoid, mish, softplus: the input (mish and softplus measured in
//   1.13 and 2.6: MishBackward0, SoftplusBackward0 keep x; op_rules.md §7).
//   Softplus is on CUDA autocast's fp32 list (autocast_mode.cpp): a 16-bit input is cast to fp32
//   first and the activation keeps the fp32 copy; CPU autocast keeps its input's type (measured).
//   In place: ReLU / LeakyReLU / ELU(inplace=True) keep the shared result (no new tensor); ReLU6 / Hardswish /
//   SiLU(inplace=True), as torchvision's Conv2dNormActivation builds them, alias the input but
//   keep a *clone of the original input* — an input-sized new tensor (measured,
//   zoo_op_probe.py): in place saves nothing over out of place for them.
//   dropout: CUDA's native_dropout keeps a 1-byte bool mask; the CPU path multiplies by a noise
//   tensor of the input's type and keeps that. Dropout(inplace=True) takes the non-fused path
//   on CUDA as well (at::dropout_ -> _dropout<inplace>): an input-sized noise tensor of the
//   input's type, kept by mul_'s node; the output aliases the input.
#pragma once
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>

namespace gpubudget {

enum class activation_kind : std::int64_t { relu, gelu, silu, sigmoid, tanh, leaky_relu, elu, relu6, hardswish, hardsigmoid, mish, softplus };

/// An elementwise activation, out of place or in place.
struct activation_op {
  activation_kind kind = {};
  flag inplace = {};
  /// Does autograd keep the output (rather than the input)?
  constexpr bool keeps_output() const {
    return kind == activation_kind::relu || kind == activation_kind::sigmoid || kind == activation_kind::tanh;
  }
  /// In place, does the node keep the shared result (relu_, and leaky_relu_ / elu_, whose
  /// LeakyReluBackward1 / EluBackward1 read the result: derivatives.yaml; measured on the 2.6 CPU,
  /// x[2,16,8,8]: one saved tensor, the result) rather than a clone of the input?
  constexpr bool inplace_keeps_result() const {
    return kind == activation_kind::relu || kind == activation_kind::leaky_relu || kind == activation_kind::elu;
  }
};

namespace detail {
/// An in-place op on a view autograd tracks (value::tracked_view: instance_norm's output) is
/// rebased onto the view's base by CopySlices: its backward makes the base's gradient (zeros of
/// its size, the incoming gradient copied in) and clones the view's slice for the op's backward,
/// two tensors of the input's size beside the op's own gradient (measured on the 2.6 CPU:
/// InstanceNorm2d then LeakyReLU(0.2, True), tests/export's patchgan_b2_128, trace_peak.py: new_zeros,
/// clone, leaky_relu_backward at the step's peak; autograd's CopySlices::apply).
constexpr void inplace_on_view_backward(sim& s, std::int32_t n, const value& x) {
  if (x.tracked_view) s.backward_temp(n, checked_mul(2, s.bytes_of_value(x)));
}

/// An in-place op whose node keeps a new tensor of `kept` bytes (default: input-sized, the
/// original input's clone or dropout's noise; channel dropout's is one value per channel): no new
/// output storage.
constexpr value inplace_keeping_copy(sim& s, const value& x, std::int64_t kept = -1) {
  value y = s.view(x, x.s);
  auto n = s.record(y);
  s.save_new(n, kept >= 0 ? kept : s.bytes_of_value(x));
  s.grad_to(n, x);
  inplace_on_view_backward(s, n, x);
  return y;
}
}  // namespace detail

template <>
struct op_traits<activation_op> {
  static constexpr const char* name = "activation";
  static constexpr detail::value lower(detail::layer_ctx& c, const activation_op& op, const detail::value& x) {
    auto& s = c.s;
    if (op.inplace && op.inplace_keeps_result()) {  // relu_: the result is the input's storage, kept
      detail::value y = s.view(x, x.s);
      auto n = s.record(y);
      s.save(n, y);
      s.grad_to(n, x);
      detail::inplace_on_view_backward(s, n, x);
      return y;
    }
    if (op.inplace) return detail::inplace_keeping_copy(s, x);
    if (op.kind == activation_kind::softplus) {  // autocast's fp32 list: keeps the fp32 copy
      detail::value xin = detail::cast_to(s, x, s.types.fp32_op(x.type));
      detail::value y = detail::keep_input_activation(s, xin);
      s.release(xin);
      return y;
    }
    return op.keeps_output() ? detail::keep_output_activation(s, x) : detail::keep_input_activation(s, x);
  }
};

namespace detail {
constexpr layer make_activation(activation_kind k, bool inplace = false) { return as_layer(activation_op{k, inplace}); }
}  // namespace detail

constexpr layer relu() { return detail::make_activation(activation_kind::relu); }
/// nn.ReLU(inplace=True): overwrites its input.
constexpr layer relu_inplace() { return detail::make_activation(activation_kind::relu, true); }
constexpr layer gelu() { return detail::make_activation(activation_kind::gelu); }
constexpr layer silu() { return detail::make_activation(activation_kind::silu); }
constexpr layer sigmoid() { return detail::make_activation(activation_kind::sigmoid); }
constexpr layer tanh() { return detail::make_activation(activation_kind::tanh); }
constexpr layer leaky_relu() { return detail::make_activation(activation_kind::leaky_relu); }
constexpr layer elu() { return detail::make_activation(activation_kind::elu); }
/// nn.LeakyReLU(slope, inplace=True) (GAN discriminators), nn.ELU(inplace=True): overwrite their
/// input and keep the result, as relu_inplace.
constexpr layer leaky_relu_inplace() { return detail::make_activation(activation_kind::leaky_relu, true); }
constexpr layer elu_inplace() { return detail::make_activation(activation_kind::elu, true); }
/// nn.ReLU6() (F.hardtanh(x, 0, 6)): keeps its input.
constexpr layer relu6() { return detail::make_activation(activation_kind::relu6); }
/// nn.ReLU6(inplace=True): output aliases the input; keeps an input-sized clone.
constexpr layer relu6_inplace() { return detail::make_activation(activation_kind::relu6, true); }
/// nn.Hardswish(): keeps its input.
constexpr layer hardswish() { return detail::make_activation(activation_kind::hardswish); }
/// nn.Hardswish(inplace=True): output aliases the input; keeps an input-sized clone.
constexpr layer hardswish_inplace() { return detail::make_activation(activation_kind::hardswish, true); }
/// nn.Hardsigmoid(): keeps its input.
constexpr layer hardsigmoid() { return detail::make_activation(activation_kind::hardsigmoid); }
/// nn.SiLU(inplace=True): output aliases the input; keeps an input-sized clone.
constexpr layer silu_inplace() { return detail::make_activation(activation_kind::silu, true); }
/// nn.Mish(): keeps its input.
constexpr layer mish() { return detail::make_activation(activation_kind::mish); }
/// nn.Softplus() (any beta and threshold): keeps its input, in fp32 under CUDA autocast.
constexpr layer softplus() { return detail::make_activation(activation_kind::softplus); }

/// nn.PReLU(num_parameters): max(0, x) + weight·min(0, x) with a learned weight per channel
/// (dimension 0) or one for all. Measured (PyTorch 1.13 PreluBackward0, 2.6 PreluKernelBackward0,
/// x [2,16,32,32] fp32; op_rules.md U2): the node keeps x (and the weight, a parameter); its backward
/// makes an input-sized weight gradient that the engine then sums to the weight's shape (2.6:
/// _prelu_kernel_backward; +131 KiB over grad_input). prelu is on autocast's lower-precision lists
/// (autocast_mode.cpp, CUDA and CPU): an fp32 input is cast first (the weight's [C] copy is not counted).
struct prelu_op {
  std::int64_t parameters = 1;
};

template <>
struct op_traits<prelu_op> {
  static constexpr const char* name = "prelu";
  static constexpr detail::value lower(detail::layer_ctx& c, const prelu_op& op, const detail::value& x) {
    auto& s = c.s;
    if (op.parameters != 1 && (x.s.rank < 1 || op.parameters != x.s[0])) detail::prelu_parameters_must_be_one_or_channels();
    c.add_param(op.parameters);
    detail::value xin = detail::cast_to(s, x, c.matmul_type(x.type));
    detail::value y = detail::broadcast_weighted(c, xin, op.parameters, true);  // x's gradient reads its sign
    s.release(xin);
    return y;
  }
};

/// nn.PReLU(): one weight for every channel.
constexpr layer prelu() { return as_layer(prelu_op{1}); }
/// nn.PReLU(num_parameters=channels): a weight per channel.
constexpr layer prelu(std::int64_t num_parameters) { return as_layer(prelu_op{num_parameters}); }

/// F.glu(x, dim) / nn.GLU: a · sigmoid(b) of x's two halves along per-sample dimension `dim`
/// (half as large). GluBackward0 keeps its input (derivatives.yaml glu: self; measured on the 2.6
/// CPU, fp32 and autocast bf16: x[2,16,8,8] -> [2,8,8,8] keeps x), and glu is on no autocast list.
struct glu_op {
  std::int64_t dim = {};
};

template <>
struct op_traits<glu_op> {
  static constexpr const char* name = "glu";
  static constexpr detail::value lower(detail::layer_ctx& c, const glu_op& op, const detail::value& x) {
    detail::require_dimension(op.dim, x.s);
    const int d = static_cast<int>(op.dim);
    if (x.s[d] % 2 != 0) detail::require_input(false, detail::glu_dimension_not_even, op.dim, x.s);
    shape out = x.s;
    out[d] /= 2;
    return detail::pointwise(c.s, x, out, x.type, detail::keeps::input);
  }
};

/// nn.GLU(dim=dim + 1), F.glu(x, dim + 1): dim 0 halves the channels of [C, ...].
constexpr layer glu(std::int64_t dim) { return as_layer(glu_op{dim}); }

/// Softmax or, `log`, log-softmax over the last dimension. Both keep their output (derivatives.yaml
/// _softmax / _log_softmax: `result`), and CUDA autocast runs both the same way (autocast_mode.cpp:
/// softmax and log_softmax are both fp32_set_opt_dtype); CPU autocast keeps the input's type
/// (measured, 2.6: log_softmax of a bf16 [4, 128] keeps its bf16 output).
struct softmax_op {
  flag log = {};
  std::int64_t dim = -1;  ///< the per-sample dimension it normalizes over; -1: the last
};

template <>
struct op_traits<softmax_op> {
  static constexpr const char* name(const softmax_op& op) { return op.log ? "log_softmax" : "softmax"; }
  static constexpr detail::value lower(detail::layer_ctx& c, const softmax_op& op, const detail::value& x) {
    if (op.dim < -1 || op.dim >= x.s.rank) detail::invalid_layer_argument();
    return detail::softmax_op(c.s, x);
  }
};

constexpr layer softmax() { return as_layer(softmax_op{}); }
/// Softmax over per-sample dimension `dim` (SKNet's nn.Softmax(dim=1) over its M branches on
/// [N, M, C, 1, 1] is softmax(0)): the same memory as over the last, the output kept (2.6 CPU
/// probe, [2, 2, 64, 32, 32] over dim 1: nothing else in forward, 7 % of the input more in backward).
constexpr layer softmax(std::int64_t dim) { return as_layer(softmax_op{false, dim}); }
/// nn.LogSoftmax(dim=-1), F.log_softmax over the last dimension (a classifier's head for NLLLoss).
constexpr layer log_softmax() { return as_layer(softmax_op{true}); }
constexpr layer log_softmax(std::int64_t dim) { return as_layer(softmax_op{true, dim}); }

/// Dropout with probability `percent`/100 (an integer keeps the record integral).
/// nn.Dropout (per element) or, `per_channel`, nn.Dropout1d/2d/3d (whole channels).
struct dropout_op {
  std::int64_t percent = {};
  flag inplace = {};
  flag per_channel = {};
};

namespace detail {
/// F.dropout1d/2d/3d in training (ATen Dropout.cpp _dropout_impl with feature_dropout, on every
/// device): a noise tensor of one value per sample and channel ([B, C, 1, ...], the input's
/// type), bernoulli_ and div_ in place, then input * noise (a new tensor) or input.mul_(noise);
/// MulBackward keeps the noise only (op_rules.md 2.6 #46: x[2, 16, 32, 32] keeps [2, 16, 1, 1]).
constexpr value channel_dropout(sim& s, const value& x, std::int64_t percent, bool inplace) {
  if (percent == 0 || s.no_grad) { s.retain(x.id); return x; }
  const auto noise = bytes_of(checked_mul(s.batch, x.s[0]), x.type);
  return inplace ? inplace_keeping_copy(s, x, noise) : pointwise(s, x, x.s, x.type, keeps::nothing, noise);
}
}  // namespace detail

template <>
struct op_traits<dropout_op> {
  static constexpr const char* name = "dropout";
  static constexpr detail::value lower(detail::layer_ctx& c, const dropout_op& op, const detail::value& x) {
    if (op.percent < 0 || op.percent > 100) detail::dropout_percent_out_of_range();
    if (op.per_channel) return detail::channel_dropout(c.s, x, op.percent, op.inplace);
    if (!op.inplace || op.percent == 0 || c.s.no_grad) return detail::dropout_op(c.s, x, op.percent);
    return detail::inplace_keeping_copy(c.s, x);
  }
};

constexpr layer dropout(std::int64_t percent) { return as_layer(dropout_op{percent, false}); }
/// nn.Dropout(percent/100, inplace=True): in training, x.mul_(noise) with an input-sized noise
/// tensor kept for backward; probability 0 is the identity.
constexpr layer dropout_inplace(std::int64_t percent) { return as_layer(dropout_op{percent, true}); }
/// nn.Dropout1d / nn.Dropout2d / nn.Dropout3d(percent/100): whole channels of [C, ...] dropped,
/// one noise value kept per sample and channel; `_inplace`: inplace=True.
constexpr layer channel_dropout(std::int64_t percent) { return as_layer(dropout_op{percent, false, true}); }
constexpr layer channel_dropout_inplace(std::int64_t percent) { return as_layer(dropout_op{percent, true, true}); }

}  // namespace gpubudget
