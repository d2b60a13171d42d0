// gpubudget/layers/moe.hpp — a Mixtral-style sparse mixture-of-experts MLP.
//
// transformers' MixtralSparseMoeBlock.forward, op for op:
//   router_logits = gate(x)                                   # Linear(D, E), no bias: keeps x
//   w = softmax(router_logits, dim=1, dtype=float)            # fp32, keeps its output
//   w, sel = topk(w, k)                                       # keeps the int64 indices [T, k]
//   w /= w.sum(-1, keepdim=True); w = w.to(x.dtype)           # the division keeps both operands
//   out = zeros(T, D); mask = one_hot(sel, E).permute(2, 1, 0)  # int64 [E, k, T], alive to the end
//   for e: idx, top = where(mask[e])                          # int64 [n_e] each
//          h = x[top]                                         # a gathered copy [n_e, D]
//          y = down(silu(gate_e(h)) * up_e(h)) * w[top, idx, None]
//          out.index_add_(0, top, y.to(x.dtype))              # keeps the index and y
// Every expert's weights are parameters (total), each token runs top_k of them (active).
// Routing is uniform by default: expert e gets ceil(T · k / E · capacity / 100) tokens (a
// capacity factor above 100 % budgets an unbalanced router).
//
// transformers 5 (moe_impl::grouped_mm, its default experts_implementation): MixtralExperts holds
// gate_up_proj [E, 2·ffn, D] and down_proj [E, D, ffn] as 3-D parameters and
// integrations/moe.py's grouped_mm_experts_forward runs every (token, expert) pair at once:
//   perm = sort(top_k_index.reshape(-1)); h = x[perm // k]       # [S = T·k, D], keeps the index
//   wg = scores.reshape(-1)[perm]; h.masked_fill_(sentinel, 0)   # keeps perm, the [S, 1] bool mask
//   p = grouped_mm(h, gate_up_projᵀ)                             # [S, 2·ffn], keeps h
//   a = silu(p[:, :ffn]) * p[:, ffn:]                            # keeps p (the views' storage) and silu's output
//   y = grouped_mm(a, down_projᵀ) * wg[:, None]                  # keeps a; the product keeps y and wg
//   out = y[inverse perm].view(T, k, D).sum(1).to(x.dtype)       # keeps the inverse permutation
// in the weights' type whatever autocast says (grouped_mm and its fallback, a torch.library custom
// op, are not autocast ops: pytorch-2.6-cpu-transformers.json hf_mixtral_b2_t64_bf16 keeps fp32
// experts), the router's scores left in fp32; the split between experts does not matter.
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// How the experts run: transformers 4.x's nn.Linear modules looped over (expert_modules), or
/// transformers 5's 3-D parameters through grouped_mm_experts_forward (grouped_mm).
enum class moe_impl : std::int64_t { expert_modules, grouped_mm };

struct moe_op {
  std::int64_t experts = {};
  std::int64_t top_k = {};
  std::int64_t ffn = {};               ///< each expert's SwiGLU intermediate size
  std::int64_t capacity_percent = {};  ///< tokens routed per expert vs uniform routing (100: uniform)
  moe_impl impl = {};
};

namespace detail {

[[noreturn]] inline void moe_top_k_must_be_between_1_and_the_expert_count() {
  fail("gpubudget: mixture of experts: top_k must be between 1 and the number of experts");
}

/// One expert on its gathered tokens `h` ([n, D]): down(silu(gate(h)) * up(h)); parameter keys
/// from `part`. Consumes nothing.
constexpr value moe_expert(layer_ctx& c, const value& h, std::int64_t ffn, std::int64_t D, std::int32_t part) {
  auto& s = c.s;
  value g = linear_op(c, h, ffn, false, part);
  value a = keep_input_activation(s, g);  // SiLU keeps its input
  s.release(g);
  value u = linear_op(c, h, ffn, false, part + 1);
  value p = multiply(s, a, u, a.s);
  s.release(a);
  s.release(u);
  value y = linear_op(c, p, D, false, part + 2);
  s.release(p);
  return y;
}

/// The routing: gate, fp32 softmax, top-k, renormalization, cast back (transformers 5's
/// MixtralTopKRouter: none, `cast_back` false). Returns the [T, k] weights.
constexpr value moe_router(layer_ctx& c, const moe_op& op, const value& x, bool cast_back = true) {
  auto& s = c.s;
  const auto T = x.s[0];
  value logits = linear_op(c, x, op.experts, false, 0);
  value lf = cast_to(s, logits, dtype::fp32);  // softmax(dtype=torch.float)
  s.release(logits);
  value p = keep_output_activation(s, lf);
  s.release(lf);
  const auto topk_index = bytes_of(checked_mul(checked_mul(s.batch, T), op.top_k), dtype::int64);
  value w = pointwise(s, p, make_shape(T, op.top_k), dtype::fp32, keeps::nothing, topk_index);  // TopkBackward keeps the indices
  s.release(p);
  value sum = reduce(s, w, make_shape(T, 1));
  value wn = multiply(s, w, sum, w.s);  // w / sum: DivBackward keeps both operands
  s.release(w);
  s.release(sum);
  if (!cast_back) return wn;
  value wc = cast_to(s, wn, x.type);
  s.release(wn);
  return wc;
}

/// One grouped_mm over the [S, in] rows `h` with the experts' [E, out, in] weight (parameter key
/// `part`), in the weight's type (no autocast): keeps its input; the weight's gradient is the
/// whole 3-D tensor (the fallback's zeros_like(weight)). Consumes nothing.
constexpr value grouped_linear(layer_ctx& c, const value& h, std::int64_t experts, std::int64_t out_features, std::int32_t part) {
  const auto weight = checked_mul(checked_mul(experts, out_features), h.s.last());
  c.add_param(weight);
  value in = cast_to(c.s, h, c.param_type());  // F.grouped_mm(input.to(weight.dtype), ...)
  value y = with_params(c, in, make_shape(h.s[0], out_features), c.param_type(), weight, c.trainable, 0, 0, 0, 0, part);
  c.s.note_cublas_call();
  c.s.release(in);
  return y;
}

/// transformers 5's experts (moe_impl::grouped_mm; the file comment): every (token, expert) pair
/// in one [T·k, ·] tensor, in the weights' type. Consumes nothing.
constexpr value moe_grouped(layer_ctx& c, const moe_op& op, const value& x) {
  auto& s = c.s;
  const auto T = x.s[0], D = x.s[1], S = checked_mul(T, op.top_k);
  value w = moe_router(c, op, x, false);
  const auto index = bytes_of(checked_mul(s.batch, S), dtype::int64), mask = bytes_of(checked_mul(s.batch, S), dtype::boolean);
  // x[perm // k] keeps its index, masked_fill_ the sentinel mask; the gradient scattered into x's size
  value h = pointwise(s, x, make_shape(S, D), x.type, keeps::nothing, index + mask, 0, s.bytes_of_value(x));
  value wg = pointwise(s, w, make_shape(S, 1), w.type, keeps::nothing, index);  // scores[perm] keeps perm
  s.release(w);
  value p = grouped_linear(c, h, op.experts, 2 * op.ffn, 1);
  s.release(h);
  value gate = s.view(p, make_shape(S, op.ffn)), up = s.view(p, make_shape(S, op.ffn));
  s.release(p);
  value a = keep_input_activation(s, gate);  // silu keeps its input (p's storage)
  s.release(gate);
  value prod = multiply(s, a, up, a.s);  // keeps silu's output and up (p's storage)
  s.release(a), s.release(up);
  value y = grouped_linear(c, prod, op.experts, D, 2);
  s.release(prod);
  value yw = multiply(s, y, wg, y.s);  // * wg[:, None]: keeps both
  s.release(y), s.release(wg);
  // y[inverse perm] keeps the inverse permutation; .view(T, k, D).sum(1) keeps nothing
  value back = pointwise(s, yw, yw.s, yw.type, keeps::nothing, index, 0, s.bytes_of_value(yw));
  s.release(yw);
  value out = reduce(s, back, make_shape(T, D));
  s.release(back);
  value cast = cast_to(s, out, x.type);
  s.release(out);
  return cast;
}

constexpr value moe_block(layer_ctx& c, const moe_op& op, const value& x) {
  auto& s = c.s;
  if (x.s.rank != 2) shape_mismatch_between_layers();
  if (op.experts <= 0 || op.ffn <= 0 || op.capacity_percent <= 0) invalid_layer_argument();
  if (op.top_k < 1 || op.top_k > op.experts) moe_top_k_must_be_between_1_and_the_expert_count();
  if (op.impl == moe_impl::grouped_mm) return moe_grouped(c, op, x);
  const auto T = x.s[0], D = x.s[1];
  value w = moe_router(c, op, x);
  const auto routed = (checked_mul(checked_mul(T, op.top_k), op.capacity_percent) + op.experts * 100 - 1) / (op.experts * 100);
  const auto n = routed < T ? routed : T;
  value out = s.make(x.s, x.type, false);  // torch.zeros
  value mask{s.allocate(bytes_of(checked_mul(checked_mul(s.batch, op.experts * op.top_k), T), dtype::int64)), {}, dtype::int64, false};
  for (std::int64_t e = 0; e < op.experts; ++e) {
    const auto index = bytes_of(checked_mul(s.batch, n), dtype::int64);
    value h = pointwise(s, x, make_shape(n, D), x.type, keeps::nothing, index, 0, s.bytes_of_value(x));  // x[top]: grad scattered into x's size
    value y = moe_expert(c, h, op.ffn, D, static_cast<std::int32_t>(1 + 3 * e));
    s.release(h);
    value we = pointwise(s, w, make_shape(n, 1), w.type, keeps::nothing, 2 * index);  // w[top, idx, None]
    value ys = multiply(s, y, we, y.s);
    s.release(y);
    s.release(we);
    // out.index_add_(0, top, ys): in place (same storage); IndexAddBackward keeps the index (the
    // storage the weights' gather keeps already) and the source (its formula's expand_as(source):
    // moe_probe.py, +[n, D] per expert), passes the gradient through to out, gathers it for ys
    const value acc{out.id, out.s, out.type, out.requires_grad || ys.requires_grad};
    if (auto nd = s.record(acc); nd >= 0) {
      s.save(nd, ys);
      s.grad_to(nd, out, true);
      s.grad_to(nd, ys);
    }
    out = acc;
    s.release(ys);
  }
  s.release(mask);
  s.release(w);
  return out;
}

}  // namespace detail

template <>
struct op_traits<moe_op> {
  static constexpr const char* name = "moe";
  static constexpr detail::value lower(detail::layer_ctx& c, const moe_op& op, const detail::value& x) {
    return detail::moe_block(c, op, x);
  }
  /// The router plus top_k experts per token.
  static constexpr std::int64_t flops(const moe_op& op, const shape& in, const shape&) {
    return 2 * in[0] * in[1] * (op.experts + op.top_k * 3 * op.ffn);
  }
};

/// A sparse MoE MLP over [tokens, width]: `experts` SwiGLU experts of intermediate size `ffn`,
/// each token routed to `top_k` of them; `capacity_percent` scales the tokens per expert (the
/// expert modules' loop; transformers 5's grouped experts run every pair at once: `impl`).
constexpr layer moe(std::int64_t experts, std::int64_t top_k, std::int64_t ffn, std::int64_t capacity_percent = 100,
                    moe_impl impl = moe_impl::expert_modules) {
  if (top_k < 1 || top_k > experts) detail::moe_top_k_must_be_between_1_and_the_expert_count();
  return as_layer(moe_op{experts, top_k, ffn, capacity_percent, impl});
}

}  // namespace gpubudget
