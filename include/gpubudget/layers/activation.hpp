// gpubudget/layers/activation.hpp — activations, softmax and dropout.
//
// What PyTorch 1.13's autograd keeps (tools/autograd/derivatives.yaml):
//   relu, sigmoid, tanh, softmax, log_softmax: the output;  gelu, silu, leaky_relu, elu: the input;
//   in-place relu: the (shared) result, no new tensor.
//   dropout: CUDA's native_dropout keeps a 1-byte bool mask; the CPU path multiplies by an fp32
//   noise tensor and keeps that.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

namespace detail {
constexpr layer make_activation(activation_kind k) { layer l{}; l.kind = op::activation; l.act = k; return l; }
}  // namespace detail

constexpr layer relu() { return detail::make_activation(activation_kind::relu); }
/// nn.ReLU(inplace=True): overwrites its input.
constexpr layer relu_inplace() { return detail::make_activation(activation_kind::relu_inplace); }
constexpr layer gelu() { return detail::make_activation(activation_kind::gelu); }
constexpr layer silu() { return detail::make_activation(activation_kind::silu); }
constexpr layer sigmoid() { return detail::make_activation(activation_kind::sigmoid); }
constexpr layer tanh() { return detail::make_activation(activation_kind::tanh); }
constexpr layer leaky_relu() { return detail::make_activation(activation_kind::leaky_relu); }
constexpr layer elu() { return detail::make_activation(activation_kind::elu); }
/// Softmax over the last dimension.
constexpr layer softmax() { layer l{}; l.kind = op::softmax; return l; }
/// Dropout with probability `percent`/100 (an integer keeps the record integral).
constexpr layer dropout(std::int64_t percent) { layer l{}; l.kind = op::dropout; l.a[0] = percent; return l; }

namespace detail::rules {

constexpr value lower_activation(layer_ctx& c, const value& x) {
  auto& s = c.s;
  switch (c.L.act) {
    case activation_kind::relu_inplace: {
      value y = s.view(x, x.s);
      auto n = s.record(y);
      s.save(n, y);
      s.grad_to(n, x);
      return y;
    }
    case activation_kind::relu:
    case activation_kind::sigmoid:
    case activation_kind::tanh: return pointwise(s, x, x.s, x.type, keeps::output);
    default: return pointwise(s, x, x.s, x.type, keeps::input);
  }
}

constexpr value lower_softmax(layer_ctx& c, const value& x) {
  value xin = cast_to(c.s, x, c.fp32_op_type(x.type));
  value y = pointwise(c.s, xin, x.s, xin.type, keeps::output);
  c.s.release(xin);
  return y;
}

constexpr value lower_dropout(layer_ctx& c, const value& x) {
  if (c.L.a[0] <= 0 || c.s.no_grad) { c.s.retain(x.id); return x; }  // identity
  const auto n_el = checked_mul(c.s.batch, x.s.numel());
  if (c.cpu()) {
    // noise = empty_like(x).bernoulli_(1-p).div_(1-p); out = x * noise: MulBackward keeps noise
    return pointwise(c.s, x, x.s, x.type, keeps::nothing, bytes_of(n_el, x.type));
  }
  return pointwise(c.s, x, x.s, x.type, keeps::nothing, bytes_of(n_el, dtype::boolean));
}

}  // namespace detail::rules
}  // namespace gpubudget
