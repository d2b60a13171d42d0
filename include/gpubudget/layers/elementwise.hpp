// gpubudget/layers/elementwise.hpp — per-channel scaling and stochastic depth.
#pragma once
#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// ConvNeXt's layer scale: x * gamma with a learned gamma of one value per channel
/// (dimension 0). The product keeps x (gamma's gradient needs it).
constexpr layer layer_scale() { layer l{}; l.kind = op::layer_scale; return l; }

/// Stochastic depth ("row" mode) with drop probability `per_mille`/1000: in training, the
/// input times a per-sample Bernoulli noise [B, 1, ...]; the product keeps only the noise.
/// Probability 0 is the identity.
constexpr layer stochastic_depth(std::int64_t per_mille) { layer l{}; l.kind = op::stochastic_depth; l.a[0] = per_mille; return l; }

namespace detail::rules {

constexpr value lower_layer_scale(layer_ctx& c, const value& x) {
  const auto ch = x.s[0];
  c.add_param(ch);
  value y = c.s.make(x.s, x.type, c.records(x));
  auto n = c.s.record(y);
  if (c.trainable) c.s.save(n, x);
  c.s.grad_to(n, x);
  c.param_grads(n, ch);
  if (c.trainable) c.s.backward_temp(n, c.s.bytes_of_value(x));  // gamma's gradient before its reduction
  return y;
}

constexpr value lower_stochastic_depth(layer_ctx& c, const value& x) {
  if (c.L.a[0] <= 0 || c.s.no_grad) { c.s.retain(x.id); return x; }
  return pointwise(c.s, x, x.s, x.type, keeps::nothing, checked_mul(c.s.batch, 4));
}

}  // namespace detail::rules
}  // namespace gpubudget
