// gpubudget/layers/llama.hpp — the Llama family's layers: RMSNorm and the SwiGLU MLP, in the
// op order of transformers' LlamaRMSNorm and LlamaMLP (Mistral uses the same modules). Rotary
// embeddings live with the attention (layers/rotary.hpp, option `rotary`).
//
// What PyTorch's autograd keeps (zoo_op_probe.py `rms_norm`, `swiglu`; op_rules.md §7):
//   RMSNorm  h = x.to(fp32); v = h.pow(2).mean(-1, keepdim=True); h = h * rsqrt(v + eps);
//            out = weight * h.to(x.dtype)
//     pow keeps its input (x), mean(dim) keeps its input (the x-sized square, op_rules §0.8),
//     rsqrt keeps its [rows, 1] result, h * r keeps h and r, weight * h keeps h: after forward
//     2·|x| of new saved tensors besides the input — an eager RMSNorm costs more than LayerNorm.
//   SwiGLU   down(silu(gate(x)) * up(x)): keeps x (once), gate(x) (silu's input), silu's output
//     and up(x) (the product's operands) and the product (down's input): x + 4 hidden-sized.
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/graph.hpp>
#include <gpubudget/layers/activation.hpp>
#include <gpubudget/layers/dense.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {


/// A gated MLP: down_proj(act(gate_proj(x)) * up_proj(x)), all three without bias; `hidden` is
/// the intermediate size, `activation` one activation record (GemmaMLP: gelu with the tanh
/// approximation, which keeps its input as gelu does). Output width = input width `width`.
constexpr auto gated_mlp(std::int64_t hidden, std::int64_t width, layer activation) {
  // transformers' LlamaMLP / GemmaMLP module names
  return sequential(parallel(merge_kind::multiply, sequential(named("gate_proj", linear(hidden, no_bias)), named("act_fn", activation)),
                             named("up_proj", linear(hidden, no_bias))),
                    named("down_proj", linear(width, no_bias)));
}

/// Phi3MLP's middle: gate, up = x.chunk(2, dim=-1); up * silu(gate) on the fused gate_up_proj
/// output [.., 2·hidden]. Both halves are views of x: SiLU keeps its input (the view, so all of
/// x), the product keeps SiLU's output and the up view; output [.., hidden].
struct silu_of_halves_op {};

template <>
struct op_traits<silu_of_halves_op> {
  static constexpr const char* name = "silu_of_halves";
  static constexpr detail::value lower(detail::layer_ctx& c, const silu_of_halves_op&, const detail::value& x) {
    using namespace detail;
    auto& s = c.s;
    if (x.s.rank < 1 || x.s.last() % 2 != 0) shape_mismatch_between_layers();
    shape half = x.s;
    half[-1] = x.s.last() / 2;
    value gate = s.view(x, half), up = s.view(x, half);
    value act = keep_input_activation(s, gate);
    s.release(gate);
    value y = s.make(half, act.type, act.requires_grad || up.requires_grad);
    auto n = s.record(y);
    s.save(n, act);
    s.save(n, up);
    s.grad_to(n, act);
    s.grad_to(n, up);
    s.release(act);
    s.release(up);
    return y;
  }
};

constexpr layer silu_of_halves() { return as_layer(silu_of_halves_op{}); }

/// LlamaMLP: the gated MLP with SiLU (SwiGLU); `hidden` is the intermediate size (11008 for
/// Llama-2-7B).
constexpr auto swiglu(std::int64_t hidden, std::int64_t width) { return gated_mlp(hidden, width, silu()); }

/// LlamaRMSNorm over the last dimension: a weight, no bias, stored as `weight` (`same`: the
/// precision's parameter type; a frozen base loaded in 16 bit keeps its norms in 16 bit too).
/// How an RMSNorm applies its weight to the normalized fp32 tensor h.
enum class rms_weighting : std::int64_t {
  cast_then_weight,    ///< LlamaRMSNorm: weight · h.to(input type)
  one_plus_then_cast,  ///< GemmaRMSNorm, Gemma3RMSNorm: (h · (1 + weight.float())).type_as(x)
  weight_then_cast,    ///< Olmo2RMSNorm: (weight · h).to(input type)
};

struct rms_norm_op {
  base_weights weight = base_weights::same;
  rms_weighting weighting = rms_weighting::cast_then_weight;
};

namespace detail {
/// The end of an RMSNorm that weights in fp32 before the cast (GemmaRMSNorm's
/// `(h * (1.0 + self.weight.float())).type_as(x)`, Olmo2RMSNorm's `(self.weight * h).to(input_dtype)`)
/// on the normalized fp32 `h` (consumed): the product is fp32 whatever the weight's type, then
/// cast to x's type (a new tensor under autocast). Gemma's 1 + w is a new [width] fp32 tensor the
/// product keeps beside h (its gradient reads both); Olmo 2's weight is the parameter itself.
constexpr value weighted_then_cast(layer_ctx& c, const value& x, const value& h, std::int64_t width, bool one_plus) {
  auto& s = c.s;
  value y = s.make(h.s, dtype::fp32, c.records(h));
  auto n = s.record(y);
  if (c.trainable) s.save(n, h);
  if (one_plus && h.requires_grad) s.save_new(n, bytes_of(width, dtype::fp32));  // 1 + w, read by h's gradient
  s.grad_to(n, h);
  c.param_grads(n, width);
  if (c.trainable) s.backward_temp(n, s.bytes_of_value(h));
  s.release(h);
  value out = cast_to(s, y, x.type);
  s.release(y);
  return out;
}
}  // namespace detail

template <>
struct op_traits<rms_norm_op> {
  static constexpr const char* name = "rms_norm";
  static constexpr detail::value lower(detail::layer_ctx& c, const rms_norm_op& op, const detail::value& x) {
    using namespace detail;
    auto& s = c.s;
    if (x.s.rank < 1) tensor_rank_unsupported();
    const auto width = x.s.last();
    c.add_param(width);
    value xf = cast_to(s, x, dtype::fp32);  // hidden_states.to(torch.float32)
    // pow(2): keeps its input; its backward holds two more input-sized temporaries (op_rules §1)
    value sq = pointwise(s, xf, xf.s, dtype::fp32, keeps::input, 0, 0, 2 * s.bytes_of_value(xf));
    shape rows = xf.s;
    rows[-1] = 1;
    // mean(-1, keepdim=True) keeps the square in 1.13, nothing in 2.6 (op_rules.md 2.6 #6: RMSNorm
    // saves x, x², rsqrt, h -> x, rsqrt, h; the rule lives in mean_reduce)
    value var = mean_reduce(s, sq, rows);
    s.release(sq);
    value eps = pointwise(s, var, rows, dtype::fp32, keeps::nothing);  // + variance_epsilon
    s.release(var);
    value r = pointwise(s, eps, rows, dtype::fp32, keeps::output);  // rsqrt keeps its result
    s.release(eps);
    value h = broadcast_multiply(s, xf, r, xf.s);  // keeps h and r
    s.release(r);
    s.release(xf);
    if (op.weighting != rms_weighting::cast_then_weight) return weighted_then_cast(c, x, h, width, op.weighting == rms_weighting::one_plus_then_cast);
    value hc = cast_to(s, h, x.type);  // .to(input_dtype)
    s.release(h);
    // weight * h: keeps h for the weight's gradient (computed at full size, then reduced); the
    // product has the promoted type of the weight and h (a bf16 weight keeps a bf16 stream:
    // op_rules.md LLM features #L1)
    const dtype pt = c.stored_type(op.weight);
    value y = s.make(x.s, pt == dtype::fp32 || hc.type == dtype::fp32 ? dtype::fp32 : hc.type, c.records(hc));
    auto n = s.record(y);
    if (c.trainable) s.save(n, hc);
    s.grad_to(n, hc);
    c.param_grads(n, width);
    if (c.trainable) s.backward_temp(n, s.bytes_of_value(hc));
    s.release(hc);
    return y;
  }
};

constexpr layer rms_norm(base_weights weight = base_weights::same) { return as_layer(rms_norm_op{weight}); }
/// Gemma's RMSNorm ((1 + weight) in fp32, cast back: rms_weighting::one_plus_then_cast).
constexpr layer gemma_rms_norm(base_weights weight = base_weights::same) { return as_layer(rms_norm_op{weight, rms_weighting::one_plus_then_cast}); }
/// OLMo 2's RMSNorm (weight · h in fp32, cast back: rms_weighting::weight_then_cast).
constexpr layer olmo2_rms_norm(base_weights weight = base_weights::same) { return as_layer(rms_norm_op{weight, rms_weighting::weight_then_cast}); }

/// The q_norm / k_norm of an attention (attention options qk_norm, gemma_qk_norm, olmo2_qk_norm):
/// an RMSNorm over each head's channels (Qwen3's; Gemma 3's with its weighting) or over the whole
/// projection (OLMo 2's q_norm of heads · head_dim weights, k_norm of kv_heads · head_dim).
enum class qk_norm_kind : std::int64_t { none, per_head, per_head_gemma, whole_projection };

namespace detail {
/// Qwen3Attention's q_norm or k_norm: rms_norm over each head's `head_dim` channels of a
/// projection's output `x` ([tokens, heads·head_dim]), run on its [tokens, heads, head_dim] view
/// (`self.q_norm(self.q_proj(x).view(*shape, -1, head_dim))`; head_dim the whole width: OLMo 2's
/// norm of the projection). Its weight is part `part` of the layer (gradient key param_key +
/// part), stored as `weight`, applied as `weighting` says; `frozen` (or the part frozen by
/// train_only): it trains not, and counts as frozen. Consumes nothing; returns a new
/// [tokens, heads·head_dim] reference.
constexpr value head_rms_norm(layer_ctx& c, const value& x, std::int64_t head_dim, std::int32_t part, base_weights weight, bool frozen,
                              rms_weighting weighting = rms_weighting::cast_then_weight) {
  auto& s = c.s;
  if (x.s.rank != 2 || head_dim <= 0 || x.s[1] % head_dim != 0) shape_mismatch_between_layers();
  layer_ctx nc = c.sub(part);
  if (frozen || (part < 8 && ((c.frozen_parts >> part) & 1))) nc.trainable = false;
  value heads = s.view(x, make_shape(x.s[0], x.s[1] / head_dim, head_dim));
  value y = op_traits<rms_norm_op>::lower(nc, rms_norm_op{weight, weighting}, heads);
  s.release(heads);
  c.absorb(nc, part);
  if (!nc.trainable) c.frozen_parameter_count = checked_add(c.frozen_parameter_count, nc.parameter_count);
  value flat = s.view(y, x.s);
  s.release(y);
  return flat;
}
/// q_norm then k_norm of `kind` (head_rms_norm, parts `first_part` and the next) in place of `q`
/// and `k` (their old references released).
constexpr void head_rms_norms(layer_ctx& c, value& q, value& k, std::int64_t head_dim, std::int32_t first_part, base_weights weight, bool frozen,
                              qk_norm_kind kind) {
  if (kind == qk_norm_kind::none) return;
  const bool whole = kind == qk_norm_kind::whole_projection;
  const auto weighting = kind == qk_norm_kind::per_head_gemma ? rms_weighting::one_plus_then_cast
                         : whole                              ? rms_weighting::weight_then_cast
                                                              : rms_weighting::cast_then_weight;
  value qn = head_rms_norm(c, q, whole ? q.s[1] : head_dim, first_part, weight, frozen, weighting);
  c.s.release(q);
  q = qn;
  value kn = head_rms_norm(c, k, whole ? k.s[1] : head_dim, first_part + 1, weight, frozen, weighting);
  c.s.release(k);
  k = kn;
}
}  // namespace detail

}  // namespace gpubudget
