// gpubudget/detail/variational.hpp — a VAE's reparameterized latent and the KL term of its loss
// (graph.hpp gaussian_latent), each op as autograd records it: pytorch/examples' VAE measured on
// the PyTorch 2.6 CPU, op by op (tests/export/trace_peak.py vae_b2; op_rules.md 2.6 #75).
#pragma once
#include <gpubudget/detail/ops.hpp>

namespace gpubudget::detail {

/// z = mu + randn_like(logvar) · exp(0.5 · logvar) (pytorch/examples' reparameterize; AntixK's
/// `eps * std + mu` runs the same ops): the noise first (no gradient), 0.5 · logvar (keeps
/// nothing), exp (keeps its output, std; CUDA autocast runs it on an fp32 copy), eps · std
/// (MulBackward0 keeps eps, which std's gradient reads, not std: eps needs none), the sum (keeps
/// nothing). trace_peak.py vae_b2, ops 9-14.
constexpr value gaussian_latent(sim& s, const value& mu, const value& logvar) {
  const value eps = s.make(logvar.s, logvar.type, false);
  const value half = pointwise(s, logvar, logvar.s, logvar.type, keeps::nothing);
  const value half32 = cast_to(s, half, s.types.fp32_op(half.type));
  s.release(half);
  const value sd = pointwise(s, half32, half32.s, half32.type, keeps::output);
  s.release(half32);
  const value noise = s.make(sd.s, promoted_type(eps.type, sd.type), sd.requires_grad);
  const auto n = s.record(noise);
  s.save(n, eps);
  s.grad_to(n, sd);
  s.release(eps), s.release(sd);
  const value z = add(s, mu, noise);
  s.release(noise);
  return z;
}

/// `loss + kld`, kld pytorch/examples' loss_function's: -0.5 · torch.sum(1 + logvar - mu.pow(2)
/// - logvar.exp()), made after the reconstruction term (trace_peak.py vae_b2, ops 25-33): mu.pow(2)
/// keeps mu and exp its output (both fp32 under CUDA autocast, its fp32 list); in backward the two
/// subtractions' negated gradients, pow's and exp's are new latent-sized tensors (ops 37-44).
constexpr value add_kl_divergence(sim& s, const value& loss, const value& mu, const value& logvar) {
  const value one_plus = s.make(logvar.s, logvar.type, logvar.requires_grad);  // 1 + logvar: the gradient passes on
  s.grad_to(s.record(one_plus), logvar, true);
  const value mu32 = cast_to(s, mu, s.types.fp32_op(mu.type));
  const value square = pointwise(s, mu32, mu32.s, mu32.type, keeps::input);
  s.release(mu32);
  const value less_square = subtract(s, one_plus, square);
  s.release(one_plus), s.release(square);
  const value lv32 = cast_to(s, logvar, s.types.fp32_op(logvar.type));
  const value var = pointwise(s, lv32, lv32.s, lv32.type, keeps::output);
  s.release(lv32);
  const value terms = subtract(s, less_square, var);
  s.release(less_square), s.release(var);
  const value sum = scalar_of(s, terms, value{}, true);
  s.release(terms);
  const value kld = scalar_of(s, sum);
  s.release(sum);
  const value total = scalar_of(s, loss, kld);
  s.release(loss), s.release(kld);
  return total;
}

}  // namespace gpubudget::detail
