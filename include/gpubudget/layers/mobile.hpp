// gpubudget/layers/mobile.hpp — the pieces of torchvision's mobile networks (MobileNetV2/V3,
// EfficientNet): ReLU6, Hardswish, Hardsigmoid, SiLU and Dropout in their in-place forms, and
// squeeze-excitation (a per-channel gate multiplied into the feature map with broadcasting).
//
// What PyTorch 1.13's autograd keeps (benchmarks/accuracy/zoo_op_probe.py, op_rules.md §7):
//   relu6 (hardtanh), hardswish, hardsigmoid, silu — out of place: the input (derivatives.yaml:
//     hardtanh_backward(grad, self, ..), hardswish_backward(grad, self), ...).
//   The same ops in place (ReLU6(inplace=True), Hardswish(inplace=True), SiLU(inplace=True), as
//     Conv2dNormActivation builds them): the output aliases the input, but the node keeps a
//     *clone of the original input* — an input-sized new tensor (measured: unlike in-place ReLU,
//     whose node keeps the shared result). In place therefore saves nothing over out of place.
//   Dropout(inplace=True): takes the non-fused path on CUDA as well (at::dropout_ →
//     _dropout<inplace>): a noise tensor of the input's size and type, kept by mul_'s node; the
//     output aliases the input.
// Arguments: a[0] the function (mobile_act), a[1] in place, a[2] dropout percent.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers/activation.hpp>
#include <gpubudget/layers/conv.hpp>

namespace gpubudget {

enum class mobile_act : std::int64_t { relu6 = 0, hardswish = 1, hardsigmoid = 2, silu = 3, dropout = 4 };

namespace detail {
constexpr layer make_mobile_activation(mobile_act k, bool inplace, std::int64_t percent = 0) {
  layer l{};
  l.kind = op::mobile_activation;
  l.a[0] = static_cast<std::int64_t>(k);
  l.a[1] = inplace;
  l.a[2] = percent;
  return l;
}
}  // namespace detail

/// nn.ReLU6() (F.hardtanh(x, 0, 6)): keeps its input.
constexpr layer relu6() { return detail::make_mobile_activation(mobile_act::relu6, false); }
/// nn.ReLU6(inplace=True): output aliases the input; keeps an input-sized clone.
constexpr layer relu6_inplace() { return detail::make_mobile_activation(mobile_act::relu6, true); }
/// nn.Hardswish(): keeps its input.
constexpr layer hardswish() { return detail::make_mobile_activation(mobile_act::hardswish, false); }
/// nn.Hardswish(inplace=True): output aliases the input; keeps an input-sized clone.
constexpr layer hardswish_inplace() { return detail::make_mobile_activation(mobile_act::hardswish, true); }
/// nn.Hardsigmoid(): keeps its input.
constexpr layer hardsigmoid() { return detail::make_mobile_activation(mobile_act::hardsigmoid, false); }
/// nn.SiLU(inplace=True): output aliases the input; keeps an input-sized clone.
constexpr layer silu_inplace() { return detail::make_mobile_activation(mobile_act::silu, true); }
/// nn.Dropout(percent/100, inplace=True): in training, x.mul_(noise) with an input-sized noise
/// tensor kept for backward; probability 0 is the identity.
constexpr layer dropout_inplace(std::int64_t percent) { return detail::make_mobile_activation(mobile_act::dropout, true, percent); }

/// Inner activation and gate of a squeeze-excitation block.
enum class se_activation : std::int64_t { relu = 0, silu_inplace = 1 };
enum class se_gate : std::int64_t { sigmoid = 0, hardsigmoid = 1 };

/// torchvision.ops.SqueezeExcitation(C, squeeze): on x [C, H, W],
/// scale = gate(fc2(act(fc1(adaptive_avg_pool2d(x, 1))))) with 1×1 convolutions (with bias),
/// output scale * x. MobileNetV3: ReLU + Hardsigmoid; EfficientNet: SiLU(inplace) + Sigmoid.
constexpr layer squeeze_excitation(std::int64_t squeeze_channels, se_activation act = se_activation::relu,
                                   se_gate gate = se_gate::sigmoid) {
  layer l{};
  l.kind = op::squeeze_excitation;
  l.a[0] = squeeze_channels;
  l.a[1] = static_cast<std::int64_t>(act);
  l.a[2] = static_cast<std::int64_t>(gate);
  return l;
}

namespace detail::rules {

/// An in-place op whose node keeps a new input-sized tensor (the original input's clone, or
/// dropout's noise): no new output storage.
constexpr value inplace_keeping_copy(sim& s, const value& x) {
  value y = s.view(x, x.s);
  auto n = s.record(y);
  s.save_new(n, s.bytes_of_value(x));
  s.grad_to(n, x);
  return y;
}

constexpr value lower_mobile_activation(layer_ctx& c, const value& x) {
  auto& s = c.s;
  const auto kind = static_cast<mobile_act>(c.L.a[0]);
  if (kind == mobile_act::dropout) {
    if (c.L.a[2] <= 0 || s.no_grad) { s.retain(x.id); return x; }  // identity (eval or p = 0)
    return inplace_keeping_copy(s, x);
  }
  if (c.L.a[1]) return inplace_keeping_copy(s, x);
  return pointwise(s, x, x.s, x.type, keeps::input);
}

constexpr value lower_squeeze_excitation(layer_ctx& c, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 3) tensor_rank_unsupported();
  const auto ch = x.s[0], sq = c.L.a[0];
  if (sq <= 0) invalid_layer_argument();
  // adaptive_avg_pool2d(x, 1): keeps its whole input (op_rules.md §0.7)
  value pooled = pointwise(s, x, make_shape(ch, 1, 1), x.type, keeps::input);
  value h = conv_op(c, pooled, conv2d(sq, 1), 0);  // fc1 keeps its [C,1,1] input
  s.release(pooled);
  value a{};
  if (static_cast<se_activation>(c.L.a[1]) == se_activation::silu_inplace) a = inplace_keeping_copy(s, h);
  else a = pointwise(s, h, h.s, h.type, keeps::output);  // nn.ReLU(): keeps its output
  s.release(h);
  value g = conv_op(c, a, conv2d(ch, 1), 1);  // fc2
  s.release(a);
  // sigmoid keeps its output, hardsigmoid its input
  value scale = pointwise(s, g, g.s, g.type, static_cast<se_gate>(c.L.a[2]) == se_gate::sigmoid ? keeps::output : keeps::input);
  s.release(g);
  // scale * x: keeps both; the gate's gradient is computed at x's size, then reduced
  value y = broadcast_multiply(s, x, scale, x.s);
  s.release(scale);
  return y;
}

}  // namespace detail::rules
}  // namespace gpubudget
