// gpubudget/layers/lora_projection.hpp — a LoRA adapter on a frozen base projection (PEFT's lora.Linear):
// the rule that lora_linear, lora_attention and attention ops with adapters (attention_adapters) share.
//
// PEFT 0.x, peft/tuners/lora/layer.py, Linear.forward:
//     result = self.base_layer(x)                                   # frozen nn.Linear
//     result = result + lora_B(lora_A(dropout(x))) * scaling        # A: in→r, B: r→out, no bias
// What autograd keeps (derivatives.yaml, mm: self's gradient needs mat2, mat2's needs self):
//  * the frozen base matmul keeps its input only when its weight needs a gradient — never here;
//    when its input needs a gradient it keeps the weight (a parameter: no activation bytes; under
//    autocast with an fp32 base, the 16-bit weight copy, which autocast does not cache because the
//    weight does not require grad — autocast_mode.cpp, cached_cast: `arg.requires_grad()`);
//  * dropout keeps its mask (CUDA: 1 byte per element; CPU: an input-typed noise tensor);
//  * lora_A keeps its input (the dropped x, or x itself at dropout 0), lora_B keeps A's output
//    [tokens, r]; the scalar multiply and the add keep nothing.
// The frozen base weights are parameters that never train (PEFT's "all params" counts them:
// memory_budget::parameter_count equals lora_counts().all), stored in their own type, so a bf16
// base under amp_bf16 (fp32 adapters) costs 2 bytes per weight (memory_budget::base_weight_bytes,
#pragma once
#include <cstdint>

#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/units.hpp>

namespace gpubudget {

/// Hugging Face module names a LoRA adapter can target (PEFT `target_modules`), as bits.
enum lora_target : std::int64_t {
  q_proj = 1, k_proj = 2, v_proj = 4, o_proj = 8, gate_proj = 16, up_proj = 32, down_proj = 64,
  /// PEFT's "all-linear": every linear layer but the output head (Llama's module names).
  all_linear = 127,
  /// Phi-3's fused projections (Phi3Attention.qkv_proj, Phi3MLP.gate_up_proj).
  qkv_proj = 128, gate_up_proj = 256,
  /// "all-linear" on Phi-3: its four linear modules per layer.
  fused_all_linear = qkv_proj | o_proj | gate_up_proj | down_proj,
  /// Mixtral's experts (block_sparse_moe.experts.N.w1 / w2 / w3: gate, down, up) and router
  /// (block_sparse_moe.gate): PEFT's counts (models::mixtral_lora_counts); the memory model
  /// adapts attention only.
  w1 = 512, w2 = 1024, w3 = 2048, router_gate = 4096,
  /// GPT-2's Conv1D modules: attn.c_attn (q, k and v in one), c_proj (PEFT's name matches the
  /// attention's attn.c_proj and the MLP's mlp.c_proj), mlp.c_fc.
  c_attn = 8192, c_proj = 16384, c_fc = 32768,
  /// BERT's: attention.self.query, .key, .value, and "dense" (PEFT's name matches attention.output.dense,
  /// intermediate.dense, output.dense and pooler.dense).
  bert_query = 65536, bert_key = 131072, bert_value = 262144, bert_dense = 524288,
  /// T5's: the attentions' q, k, v, o (SelfAttention and EncDecAttention, both stacks) and
  /// DenseReluDense.wi, .wo.
  t5_q = 1 << 20, t5_k = 1 << 21, t5_v = 1 << 22, t5_o = 1 << 23, t5_wi = 1 << 24, t5_wo = 1 << 25,
  /// The Llama family's token embedding (model.embed_tokens): PEFT's lora.Embedding
  /// (layers/lora_embedding.hpp); not part of "all-linear".
  embed_tokens = 1 << 26,
  /// Each family's modules: what PEFT's "all-linear" means there.
  gpt2_lora_modules = c_attn | c_proj | c_fc,
  bert_lora_modules = bert_query | bert_key | bert_value | bert_dense,
  t5_lora_modules = t5_q | t5_k | t5_v | t5_o | t5_wi | t5_wo,
};


/// Bytes of a frozen weight of `elements` values in `rows` output rows stored as a quantized
/// `base` (0 for the unquantized kinds). bitsandbytes 0.4x, functional.py quantize_4bit
/// (blocksize=64: two 4-bit values per uint8, one fp32 absmax per 64 values, a 16-entry fp32 code)
/// and, with compress_statistics (double quantization), quantize_blockwise of the absmax values
/// minus their mean (blocksize=256: one uint8 per absmax, one fp32 absmax per 256 absmax values,
/// a 256-entry fp32 code, the fp32 offset) — QLoRA (Dettmers et al. 2023, §3 "Double
/// Quantization": 32/64 = 0.5 bits -> 8/64 + 32/(64·256) = 0.127 bits per parameter). int8:
/// Int8Params keeps CB (int8, [out, in]) and SCB (fp32, [out]).
constexpr std::int64_t quantized_weight_bytes(std::int64_t elements, std::int64_t rows, base_weights base) {
  const auto blocks = (elements + 63) / 64;
  switch (base) {
    case base_weights::nf4:
    case base_weights::fp4: return (elements + 1) / 2 + 4 * blocks + 16 * 4;
    case base_weights::nf4_dq:
    case base_weights::fp4_dq: return (elements + 1) / 2 + blocks + 4 * ((blocks + 255) / 256) + 256 * 4 + 4 + 16 * 4;
    case base_weights::int8: return elements + 4 * rows;
    default: return 0;
  }
}

namespace detail {

[[noreturn]] inline void lora_rank_must_be_positive_and_at_most_the_layer_width() {
  fail("gpubudget: LoRA rank must be positive and at most the adapted layer's width");
}
[[noreturn]] inline void lora_needs_a_plain_llama_config() {
  fail("gpubudget: LoRA is modelled on Llama-family decoders with separate projections (Phi-3's fused ones: phi3_lora); "
       "on Mixtral, with the base stored in the precision's type");
}
[[noreturn]] inline void kbit_preparation_needs_a_quantized_base() {
  fail("gpubudget: prepare_model_for_kbit_training (lora_config::kbit_prepared) prepares a quantized base: nf4, nf4_dq, fp4, fp4_dq or int8");
}
[[noreturn]] inline void unknown_module_to_save() {
  fail("gpubudget: unknown module in LoRA's modules_to_save (lm_head, embed_tokens; a classifier's score is in it already, "
       "and it has no lm_head)");
}
[[noreturn]] inline void unknown_lora_target_module() {
  fail("gpubudget: unknown LoRA target module for this model (Llama: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, all-linear; "
       "Phi-3: qkv_proj, o_proj, gate_up_proj, down_proj; Mixtral: q_proj, k_proj, v_proj, o_proj; GPT-2: c_attn, c_proj, c_fc, all-linear; BERT: query, key, value, dense, all-linear; T5: q, k, v, o, wi, wo, all-linear)");
}
[[noreturn]] inline void lora_on_this_family_keeps_the_base_in_the_parameter_type() {
  fail("gpubudget: LoRA on GPT-2, BERT and T5 models the frozen base in the precision's parameter type (base=same): no quantized or "
       "separately typed base, no modules_to_save beyond a classifier's, no kbit preparation");
}

/// A frozen layer's bias that trains (PEFT's LoraConfig.bias "all" or "lora_only":
/// BaseTuner._mark_only_adapters_as_trainable sets its requires_grad) as a parameter of `c`, a sub-context of
/// the layer's: `elements` values in the bias's own type `t` (PEFT's autocast_adapter_dtype upcasts
/// the adapters only, so a bf16 base's bias trains in bf16, with a bf16 gradient and optimizer
/// state, as a modules_to_save copy does: layer_ctx::own_stored_type).
constexpr void trainable_bias(layer_ctx& c, std::int64_t elements, dtype t) {
  c.own_stored_type = t != c.s.types.parameters, c.stored_as = t;
  c.add_param(elements);
  if (c.own_stored_type) c.own_type_count = c.parameter_count, c.own_type_bytes = bytes_of(c.parameter_count, t);
}

/// The type of a frozen base's bias: the weight's stored type; bitsandbytes keeps a quantized
/// base's bias unquantized, in 16 bit.
constexpr dtype frozen_bias_type(const layer_ctx& c, base_weights kind) {
  return is_quantized(kind) ? c.half_type() : c.stored_type(kind);
}

/// A frozen nn.Linear(in, out, bias=False) stored as `base`: the weight's bytes are non-trainable
/// state; the matmul keeps nothing of its input (see the header comment). A quantized weight is
/// dequantized for each use (bitsandbytes autograd/_functions.py): MatMul4Bit's forward runs
/// F.linear(A, dequantize_4bit(B).to(A.dtype).t()) and its backward dequantizes again for
/// grad_A, keeping only the packed weight; MatMul8bitLt's forward quantizes A row-wise to int8
/// and multiplies into an int32 result (then scaled to A's type), its backward dequantizes CB·SCB
/// for grad_A. Those temporaries are the transients below. `bias`: a frozen bias too (Qwen2's
/// q, k, v: addmm, no activation of its own; bitsandbytes keeps it unquantized, in 16 bit);
/// `tied`: the weight is another layer's (a tied LM head: no bytes of its own). `bias_trains`:
/// PEFT's bias="all" / "lora_only" left the bias requiring grad (trainable_bias), its parameter
/// key `bias_part` (lora_projection: the adapter's part + 16, past its adapters' and DoRA's keys).
constexpr value frozen_matmul(layer_ctx& c, const value& x, std::int64_t out_features, std::int64_t base, bool bias = false,
                              bool tied = false, bool bias_trains = false, std::int32_t bias_part = 16) {
  auto& s = c.s;
  const auto kind = static_cast<base_weights>(base);
  if (x.s.rank < 1) tensor_rank_unsupported();  // a per-sample scalar has no feature dimension
  const auto weight = checked_mul(x.s.last(), out_features);
  const dtype bt = c.stored_type(static_cast<base_weights>(base));
  if (!tied) c.add_frozen_base(weight, is_quantized(kind) ? quantized_weight_bytes(weight, out_features, kind) : bytes_of(weight, bt));
  const dtype bias_type = frozen_bias_type(c, kind);
  const bool trains = bias && bias_trains;
  layer_ctx bias_ctx = c.sub(bias_part);
  if (trains) trainable_bias(bias_ctx, out_features, bias_type);
  else if (bias) c.add_frozen_base(out_features, bytes_of(out_features, bias_type));
  shape out = x.s;
  out[-1] = out_features;
  const dtype mt = c.matmul_type(x.type);
  value xin = cast_to(s, x, mt);
  const auto gemm = cpu_linear_gemm_buffers(s, checked_mul(s.batch, x.s.numel() / x.s.last()), out_features, x.s.last(), mt, false);  // a frozen base
  // under autocast an fp32 base is cast to 16 bit for every call (not cached: no requires_grad)
  const auto wcast = c.amp() && !is_quantized(kind) && bt == dtype::fp32 ? bytes_of(weight, c.half_type()) : 0;
  const auto dequant = is_quantized(kind) ? bytes_of(weight, mt) : 0;
  const bool int8 = kind == base_weights::int8;
  value y = s.make(out, mt, x.requires_grad || trains);
  s.transient(gemm.forward + (x.requires_grad ? 0 : wcast) + (int8 ? 0 : dequant), true);
  if (int8) s.transient(s.bytes_of_value(x.s, dtype::int8) + s.bytes_of_value(out, dtype::fp32));  // CA int8, the int32 product
  if (auto n = s.record(y); n >= 0) {
    if (x.requires_grad) {
      if (wcast) s.save_new(n, wcast, 1, true);  // grad_input = grad_output · W needs the cast weight
      s.grad_to(n, xin);
      s.backward_temp(n, gemm.backward + dequant, true);
    }
    if (trains) bias_ctx.param_grads(n, out_features, 0, true);  // the output's gradient summed: nothing saved
  }
  if (trains) c.absorb(bias_ctx, bias_part);
  s.release(xin);
  if (!is_quantized(kind) || int8 || y.type == x.type) return y;
  // bitsandbytes' Linear4bit.forward: `x.to(compute_dtype)` (xin above), then `.to(inp_dtype)` of
  // the product: on the fp32 stream of prepare_model_for_kbit_training the 16-bit product comes
  // back as an fp32 copy (Linear8bitLt: not read, left as its product)
  value back = cast_to(s, y, x.type);
  s.release(y);
  return back;
}

/// DoRA's base_result at lora_dropout 0, where variants.py passes the base layer's output: on a
/// biased base dora.py's `base_result - bias` is a new tensor (SubBackward keeps nothing; a
/// 16-bit autocast output less an fp32 bias promotes to fp32, `bias_type`); otherwise the output
/// itself, retained. Release it (dora_output, dora_base_result in lora_conv.hpp).
constexpr value dora_given_base_result(sim& s, const value& base_out, bool bias, dtype bias_type) {
  if (!bias) {
    s.retain(base_out.id);
    return base_out;
  }
  return pointwise(s, base_out, base_out.s, base_out.type == dtype::fp32 || bias_type == dtype::fp32 ? dtype::fp32 : base_out.type,
                   keeps::nothing);
}

/// The frozen base of a DoRA adapter on a Linear, as dora_output needs it: the weight's storage
/// `base` (frozen_matmul), whether it has a bias, and lora_dropout in percent.
struct dora_linear_base {
  std::int64_t base = 0;
  bool bias = false;
  std::int64_t dropout = 0;
};

/// DoRA's base_result on a Linear (dora.py DoraLinearLayer.forward): at lora_dropout 0 the base
/// layer's output (dora_given_base_result); otherwise variants.py passes base_result=None and
/// dora.py runs F.linear(dropped x, W) again, without the bias: a frozen matmul of the base's
/// weights (not counted twice) that keeps what frozen_matmul's keeps. Release it. (A base stored
/// in another type than xd's, quantized or 16 bit under fp32 adapters, runs as the base's own
/// matmul here: dora.py's dequantized `weight.to(x.dtype)` copy, which F.linear's backward would
/// keep, is not modelled; not measured.)
constexpr value dora_linear_base_result(layer_ctx& c, const value& xd, const value& base_out, dora_linear_base b) {
  const auto kind = static_cast<base_weights>(b.base);
  if (b.dropout > 0) {
    layer_ctx again = c.sub(0, /*counts=*/false);
    return frozen_matmul(again, xd, base_out.s.last(), b.base);
  }
  return dora_given_base_result(c.s, base_out, b.bias, frozen_bias_type(c, kind));
}

/// PEFT's DoRA (use_dora=True; peft/tuners/lora/variants.py DoraLinearVariant.forward calls
/// dora.py DoraLinearLayer.forward with the adapters' input `xd`, dropped at lora_dropout > 0):
///     lora_weight = lora_B(lora_A(eye(in))).T;  weight_norm = ||W + scaling·lora_weight||_row (detached)
///     mag_norm_scale = magnitude / weight_norm                    # magnitude: [out] fp32, trains
///     base_result: dora_linear_base_result
///     result = result + (mag_norm_scale - 1)·base_result + mag_norm_scale·lora_result·scaling
///     result = result.to(torch_result_dtype)
/// The norm's operands are batch-independent transients (the identity, A and B of it, the scaled
/// and summed [out, in] matrices, the sum's fp32 copy for linalg.norm under autocast). The two
/// multiplies by mag_norm_scale keep base_result and lora_result (the magnitude's gradient) and
/// promote to fp32: three fp32 [tokens, out] tensors at once, the fp32 sum with `result`, then
/// its cast back. `base_out`, `lora_out`: the base layer's and B's outputs; the magnitude's
/// parameter key is `part + 8` (the adapters' keys stay below 8). Consumes both, not xd.
constexpr value dora_output(layer_ctx& c, const value& xd, const value& base_out, const value& lora_out, std::int64_t rank,
                            std::int32_t part, dora_linear_base base) {
  auto& s = c.s;
  const auto in = xd.s.last(), out = base_out.s.last();
  const auto h = bytes_per_element(lora_out.type), weight = checked_mul(in, out);
  const auto eye = checked_mul(checked_mul(in, in), bytes_per_element(xd.type)), eye_through_a = checked_mul(in * rank, h);
  const auto lora_scaled_summed = checked_mul(weight, 3 * h), sum_fp32 = checked_mul(weight, 4);
  s.transient(checked_add(checked_add(eye, eye_through_a), checked_add(lora_scaled_summed, sum_fp32)), true);
  layer_ctx m = c.sub(part + 8);
  m.add_param(out);
  // lora_weight and its graph (the identity and A(eye) that lora_A and lora_B saved) live until
  // the forward returns: beside the base's second matmul and its CPU GEMM buffer when it reruns
  // (measured: tests/export/measure_custom.py *_dora_*_drop10_*)
  const auto lora_weight_graph = checked_add(checked_add(eye, eye_through_a), checked_mul(weight, h));
  const std::int32_t held = base.dropout > 0 ? s.allocate(lora_weight_graph, false, -1, lora_weight_graph) : -1;
  value base_result = dora_linear_base_result(c, xd, base_out, base);
  value sum = s.make(base_out.s, dtype::fp32, true);  // (mag_norm_scale - 1)·base_result + mag_norm_scale·lora_result·scaling
  s.transient(2 * s.bytes_of_value(sum));  // t2, t3 / t4 beside it
  if (auto n = s.record(sum); n >= 0) {
    s.save(n, base_result), s.save(n, lora_out);
    s.save_new(n, out * 4, 2, true);  // weight_norm, mag_norm_scale
    s.grad_to(n, base_result), s.grad_to(n, lora_out);
    m.param_grads(n, out);
    s.backward_temp(n, 2 * s.bytes_of_value(sum));  // the fp32 products' gradients
  }
  c.absorb(m, part + 8);
  s.release(lora_out), s.release(base_result), s.release(held);
  value total = add(s, base_out, sum);
  s.release(base_out), s.release(sum);
  value y = cast_to(s, total, base_out.type);
  s.release(total);
  return y;
}

/// The weight side of DoRA's forward on a convolution or an embedding (peft/tuners/lora/dora.py,
/// _DoraConvNdLayer.forward and DoraEmbeddingLayer.forward): `lora_weight` (B·A in the base
/// weight's shape, `weight` elements: get_lora_weight's mm, autocast's `mt`), which the forward's
/// frame holds until it returns, and get_weight_norm's scaling·lora_weight and W + that, freed
/// with its frame (the weight norm is detached: no autograd node, only [out] values); `wt`: the
/// base weight's type. Returns the storage of lora_weight: release it where DoRA's forward
/// returns. Batch-independent bytes.
constexpr std::int32_t dora_lora_weight(layer_ctx& c, std::int64_t weight, dtype mt, dtype wt) {
  auto& s = c.s;
  const auto lora_weight = bytes_of(weight, mt);
  const auto sum = bytes_of(weight, mt == dtype::fp32 || wt == dtype::fp32 ? dtype::fp32 : mt);  // W + scaling·lora_weight
  const auto id = s.allocate(lora_weight, false, -1, lora_weight);
  s.transient(checked_add(lora_weight, sum), true);
  return id;
}

/// `mag_norm_scale * t` in DoRA's forward: mag_norm_scale = magnitude / weight_norm, an fp32
/// [out] (the magnitude is an fp32 parameter) broadcast over t, so the product is fp32. The node
/// keeps t (the magnitude's gradient reads it) and, when t needs a gradient, mag_norm_scale; the
/// magnitude's gradient is grad·t at t's size, summed to [out] (a backward temporary).
constexpr value dora_scaled(sim& s, const value& t, std::int64_t out) {
  value y = s.make(t.s, dtype::fp32, true);
  if (auto n = s.record(y); n >= 0) {
    s.save(n, t);
    if (t.requires_grad) s.save_new(n, out * 4, 1, true);
    s.grad_to(n, t);
    s.backward_temp(n, s.bytes_of_value(y));
  }
  return y;
}

/// DoRA's magnitude ([out] fp32, trains) as parameter key `part` of `c`: registered, its gradient
/// produced at node `n` (the products of dora_scaled reach it through mag_norm_scale), and the
/// detached weight_norm [out] that mag_norm_scale's DivBackward keeps.
constexpr void dora_magnitude(layer_ctx& c, std::int32_t n, std::int64_t out, std::int32_t part) {
  layer_ctx m = c.sub(part);
  m.add_param(out);
  c.s.save_new(n, out * 4, 1, true);
  m.param_grads(n, out);
  c.absorb(m, part);
}

/// The wrapped base layer of a PEFT adapter (`lower(ctx)` runs it) as a frozen sub-module, part 0
/// (on_part): its parameters count, none trains.
template <class Lower>
constexpr value frozen_base(layer_ctx& c, Lower lower) {
  const auto whole_mask = c.frozen_parts;
  c.frozen_parts = static_cast<std::uint8_t>(c.frozen_parts | 1);
  value y = on_part(c, 0, lower);
  c.frozen_parts = whole_mask;
  return y;
}

/// `result = result + lora_out * scaling`: the scalar multiply and the add keep nothing. Consumes
/// both (lora_projection, lora_conv, lora_embedding).
constexpr value add_scaled_update(sim& s, const value& base_out, const value& lora_out) {
  value scaled = pointwise(s, lora_out, lora_out.s, lora_out.type, keeps::nothing, scalar_operand_saved(s));  // * scaling
  s.release(lora_out);
  value y = add(s, base_out, scaled);
  s.release(base_out);
  s.release(scaled);
  return y;
}

/// Which PEFT forward an adapter runs: DoRA on top (dora_output), and PEFT >= 0.15's `x =
/// self._cast_input_dtype(x, lora_A.weight.dtype)` (false: an older forward without it); and
/// whether its base's bias trains.
struct peft_forward {
  bool dora = false;
  bool cast_input = true;
  bool bias_trains = false;  ///< the base's bias trains (PEFT's bias="all" / "lora_only"; frozen_matmul)
};

/// base(x) + B(A(dropout(x))) · scaling on `x`; rank 0: the frozen base alone. The adapter's
/// weights use parameter keys `part`, `part + 1`; `bias`, `tied`: the base's (frozen_matmul).
constexpr value lora_projection(layer_ctx& c, const value& x, std::int64_t out_features, std::int64_t rank,
                                std::int64_t dropout, std::int64_t base, std::int32_t part, bool bias = false, bool tied = false,
                                peft_forward peft = {}) {
  auto& s = c.s;
  if (out_features <= 0) invalid_layer_argument();
  if (rank < 0 || rank > x.s.last() || rank > out_features) lora_rank_must_be_positive_and_at_most_the_layer_width();
  value base_out = frozen_matmul(c, x, out_features, base, bias, tied, peft.bias_trains, part + 16);
  if (rank == 0) return base_out;
  layer_ctx ad = c.sub(part);
  // x = self._cast_input_dtype(x, lora_A.weight.dtype): fp32 adapters on a 16-bit x get an fp32
  // copy, which autocast's linear casts back: lora_A keeps a 16-bit copy of its own (op_rules.md
  // L8: the real-library cases' alloc_peak, Gemma-2B -0.92 % -> +0.01 %)
  value xa = cast_to(s, x, peft.cast_input ? c.param_type() : x.type);
  value xd = dropout_op(s, xa, dropout);
  s.release(xa);
  value a = linear_op(ad, xd, rank, false, 0);
  const bool dora_reads_xd = peft.dora && dropout > 0;  // F.linear(dropped x, W): dora_linear_base_result
  if (!dora_reads_xd) s.release(xd);
  value b = linear_op(ad, a, out_features, false, 1);
  s.release(a);
  c.absorb(ad, part);
  if (!peft.dora) return add_scaled_update(s, base_out, b);
  value y = dora_output(c, xd, base_out, b, rank, part, {base, bias, dropout});
  if (dora_reads_xd) s.release(xd);
  return y;
}

}  // namespace detail

}  // namespace gpubudget
