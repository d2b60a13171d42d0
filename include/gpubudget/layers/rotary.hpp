// gpubudget/layers/rotary.hpp — rotary position embeddings (RoPE) as Hugging Face's Llama and
// Mistral apply them to queries and keys inside the attention: no parameters, only activations.
//
//   q_embed = q * cos + rotate_half(q) * sin,   rotate_half(q) = cat(-q[..., d/2:], q[..., :d/2])
//
// What autograd keeps (zoo_op_probe.py `rotary_q`, op_rules.md §7): only cos and sin (q * cos
// keeps cos because cos needs no gradient; neg and cat keep nothing); the output is a new
// q-sized tensor and the forward passes through 2·|q| of temporaries (q·cos and the rotated
// half alive together with the product). cos and sin are [1, T, head_dim] in the hidden
// states' type (fp32 under autocast; rotary_qk) — [B, T, head_dim] where position_ids have the
// batch's shape (per_sample_rope_tables) —, computed once per forward before the decoder
// layers (transformers >= 4.38) and passed to every layer: one pair per forward, saved by every
// layer's products, and under checkpointing an input of every checkpointed layer (saved by its
// NoopSaveInputs node in PyTorch 2.6: llama2l_ckpt_b2_t64 saves 2 × 16 KiB more than its
// blocks' inputs; op_rules.md 2.6 #39, sim::shared_input).
//
// Use it through the attention option `rotary` (attention(..., attention_impl::flash, rotary)).
#pragma once
#include <gpubudget/detail/ops.hpp>

namespace gpubudget {

/// Attention option: apply rotary position embeddings to q and k after their projections
/// (k and v then have separate projections, as in transformers' LlamaAttention).
struct rotary_t {};
inline constexpr rotary_t rotary{};

namespace detail {

/// The model's cos and sin for `tokens` positions of `head_dim` (the rotated channels of a head), in
/// type `t`: one [T, head_dim] tensor per sample each, shared by every layer (new references).
struct rotary_tables {
  value cos, sin;
};
/// `local`: the second pair a model with two RoPEs makes (Gemma 3's rotary_emb_local, base 10,000,
/// for its sliding-window layers beside the global one).
/// `per_sample`: [B, T, head_dim] tables (position_ids of the batch's shape); else [1, T, head_dim],
/// one for the batch (transformers' forward without position_ids: attention option per_sample_rope_tables).
/// `by_keyword`: a checkpointed layer gets them as a keyword argument (sim::shared_input).
constexpr rotary_tables rotary_tables_for(sim& s, std::int64_t tokens, std::int64_t head_dim, dtype t, bool local, bool per_sample, bool by_keyword) {
  return {s.shared_input(tokens, head_dim, t, local ? 5 : 0, per_sample, false, by_keyword),
          s.shared_input(tokens, head_dim, t, local ? 6 : 1, per_sample, false, by_keyword)};
}

/// q * cos + rotate_half(q) * sin on `q` (a new reference).
constexpr value rotate_all(sim& s, const value& q, const value& cos, const value& sin) {
  if (q.s.rank != 2 || q.s[1] % 2 != 0) shape_mismatch_between_layers();
  value q1 = multiply(s, q, cos, q.s);  // q * cos: keeps cos
  value neg = pointwise(s, q, make_shape(q.s[0], q.s[1] / 2), q.type, keeps::nothing);  // -q[..., d/2:]
  // torch.cat((-x2, x1)): a new tensor, keeps nothing; its backward hands out slices
  value rot = s.make(q.s, q.type, q.requires_grad);
  if (auto n = s.record(rot); n >= 0) {
    s.grad_to(n, neg, true);
    s.grad_to(n, q, true);  // x1 is a slice of q: its gradient is scattered into a q-sized zero tensor
  }
  s.release(neg);
  value q2 = multiply(s, rot, sin, q.s);  // rotate_half(q) * sin: keeps sin
  s.release(rot);
  value out = add(s, q1, q2);
  s.release(q1);
  s.release(q2);
  return out;
}

/// apply_rotary_pos_emb on one of q, k ([T, heads·head_dim]) with tables of `rotary` channels per
/// head: returns q_embed (a new reference). Partial (rotary < head_dim: Phi-3's
/// partial_rotary_factor, modeling_phi3.py): the same on the first `rotary` channels of each head
/// (q[..., :rotary], a slice), then torch.cat with the rest, a new q-sized tensor in the promoted
/// type, laid out [B, H, L, d] (rotated_qk::heads_first). `concatenates`: transformers' Phi-3
/// (modeling_phi3.py apply_rotary_pos_emb) takes that path when it rotates every channel too (an
/// empty q_pass): the result is torch.cat's, laid out [B, H, L, d] (hf_phi3_b2_t64 of
/// pytorch-2.6-cpu-transformers.json: q and k come to SDPA from CatBackward0).
constexpr value rotary_op(sim& s, const value& q, const value& cos, const value& sin, std::int64_t heads, bool concatenates = false) {
  if (heads <= 0 || q.s.rank != 2 || q.s[1] % heads != 0) shape_mismatch_between_layers();
  const auto rotary = cos.s[1], head_dim = q.s[1] / heads;
  if (rotary == head_dim && !concatenates) return rotate_all(s, q, cos, sin);
  value rot = s.view(q, make_shape(q.s[0], heads * rotary));  // q[..., :rotary] of each head
  value rotated = rotate_all(s, rot, cos, sin);
  s.release(rot);
  value out = s.make(q.s, rotated.type, q.requires_grad);
  if (auto n = s.record(out); n >= 0) {  // torch.cat((rotated, q[..., rotary:])): keeps nothing
    s.grad_to(n, rotated, true);
    s.grad_to(n, q, true);
  }
  s.release(rotated);
  return out;
}

/// q and k after RoPE, as the attention kernel receives them. `heads_first`: laid out [B, H, L, d]
/// (a partial RoPE's torch.cat), not as the projections' [B, L, H, d] views: a kernel that
/// allocates its output like q then needs the model's transpose(1, 2).contiguous() to copy
/// (sdpa_output_needs_copy; op_rules.md L17).
struct rotated_qk {
  value q, k;
  bool heads_first = false;
};

/// RoPE on q ([Lq, ..]) and k ([Lk, ..]) as transformers applies it: the model's cos/sin are in
/// the hidden states' type `hidden` (cos.to(x.dtype): fp32 under autocast, whose Embedding and
/// RMSNorm stay fp32), so q·cos is promoted to `hidden`; SDPA, on autocast's 16-bit list, casts the
/// rotated q and k to the kernel's type `kernel` (new copies; op_rules.md 2.6 #30). Consumes
/// nothing; returns new references.
/// How a model applies RoPE: `local` its second tables (Gemma 3's sliding layers), `concatenates`
/// Phi-3's torch.cat at full width (rotary_op), `per_sample_tables` [B, T, d] tables (rotary_tables_for),
/// `fp32_tables` tables left fp32 whatever `hidden` is (OLMo 2's: attention option fp32_rope_tables).
struct rope_style {
  bool local = false, concatenates = false, per_sample_tables = false, keyword_inputs = false, fp32_tables = false;
};

constexpr rotated_qk rotary_qk(sim& s, const value& q, const value& k, std::int64_t head_dim, std::int64_t rotary, dtype hidden, dtype kernel,
                               rope_style style = {}) {
  if (head_dim <= 0 || rotary <= 0 || rotary > head_dim || rotary % 2 != 0) invalid_layer_argument();
  const bool concatenates = style.concatenates;
  const dtype table = style.fp32_tables ? dtype::fp32 : hidden;
  auto t = rotary_tables_for(s, q.s[0], rotary, table, style.local, style.per_sample_tables, style.keyword_inputs);
  value qr = rotary_op(s, q, t.cos, t.sin, q.s[1] / head_dim, concatenates);
  if (k.s[0] != q.s[0]) {
    s.release(t.cos), s.release(t.sin);
    t = rotary_tables_for(s, k.s[0], rotary, table, style.local, style.per_sample_tables, style.keyword_inputs);
  }
  value kr = rotary_op(s, k, t.cos, t.sin, k.s[1] / head_dim, concatenates);
  s.release(t.cos);
  s.release(t.sin);
  value q16 = cast_to(s, qr, kernel), k16 = cast_to(s, kr, kernel);
  s.release(qr);
  s.release(kr);
  return {q16, k16, rotary != head_dim || concatenates};
}

}  // namespace detail
}  // namespace gpubudget
