// gpubudget/layers/adapters.hpp — LoRA adapters on frozen base weights (PEFT's lora.Linear): the
// layers built on layers/lora_projection.hpp (whose comment says what PEFT's forward keeps),
// frozen and modules_to_save copies of embeddings and heads, and Llama's attention with adapters.
#pragma once
#include <optional>

#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/attention.hpp>
#include <gpubudget/layers/dense.hpp>
#include <gpubudget/layers/lora_projection.hpp>
#include <gpubudget/layers/options.hpp>
#include <gpubudget/layers/rotary.hpp>

namespace gpubudget {

/// A linear layer with a frozen base weight (and bias, `bias`) and, at rank > 0, a LoRA adapter:
/// `lora_linear(out, 8)`; `dropout` in percent on the adapter input; `base` its storage type;
/// `tied`: the base weight is an earlier layer's (a tied LM head over a frozen embedding).
struct lora_linear_op {
  std::int64_t out_features = {};
  std::int64_t rank = {};
  std::int64_t dropout = {};
  base_weights base = {};
  flag tied = {};
  flag dora = {};  ///< PEFT's use_dora: a trainable magnitude per output (dora_output)
  flag cast_input = true;  ///< PEFT's _cast_input_dtype (lora_projection)
  flag bias = {};          ///< the base has a frozen bias (GPT-2's Conv1D, BERT's and T5's Linear)
};

template <>
struct op_traits<lora_linear_op> {
  static constexpr const char* name(const lora_linear_op& op) { return op.rank > 0 ? "lora_linear" : op.tied ? "linear (frozen, tied)" : "linear (frozen)"; }
  static constexpr detail::value lower(detail::layer_ctx& c, const lora_linear_op& op, const detail::value& x) {
    if (op.dropout < 0 || op.dropout > 100) detail::invalid_layer_argument();
    return detail::lora_projection(c, x, op.out_features, op.rank, op.dropout, static_cast<std::int64_t>(op.base), 0, op.bias, op.tied, {op.dora, op.cast_input});
  }
  static constexpr std::int64_t flops(const lora_linear_op& op, const shape& in, const shape& out) {
    return 2 * in.last() * out.numel() + 2 * op.rank * (in.last() + out.last()) * (out.numel() / out.last());
  }
};

/// A frozen linear layer with a LoRA adapter of rank `rank` (0: frozen base only);
/// `dora`: PEFT's DoRA (use_dora=True); `cast_input`: PEFT >= 0.15's input cast to the
/// adapters' type (lora_projection); `bias`: the base has a (frozen) bias.
constexpr layer lora_linear(std::int64_t out_features, std::int64_t rank, std::int64_t dropout_percent = 0,
                            base_weights base = base_weights::same, bool dora = false, bool cast_input = true, bool bias = false) {
  return as_layer(lora_linear_op{out_features, rank, dropout_percent, base, false, dora && rank > 0, cast_input, bias});
}
/// A frozen LM head whose weight is the frozen embedding's (tie_word_embeddings): no adapter.
constexpr layer frozen_tied_linear(std::int64_t out_features, base_weights base = base_weights::same) {
  return as_layer(lora_linear_op{out_features, 0, 0, base, true});
}

/// A frozen nn.Embedding whose table is stored as `base` (non-trainable state).
struct frozen_embedding_op {
  std::int64_t num_embeddings = {};
  std::int64_t dim = {};
  base_weights base = {};
  /// transformers' enable_input_require_grads (prepare_model_for_kbit_training): a forward hook
  /// sets requires_grad on the output, so the layers after it keep what its gradient needs
  flag output_requires_grad = {};
};

template <>
struct op_traits<frozen_embedding_op> {
  static constexpr const char* name = "embedding (frozen)";
  static constexpr detail::value lower(detail::layer_ctx& c, const frozen_embedding_op& op, const detail::value& x) {
    if (op.num_embeddings <= 0 || op.dim <= 0) detail::invalid_layer_argument();
    if (x.s.rank >= 5) detail::tensor_rank_unsupported();
    if (x.type != dtype::int64) detail::require_input(false, detail::embedding_needs_token_ids, op.num_embeddings, x.s);
    const dtype bt = c.stored_type(op.base);
    c.add_frozen_base(checked_mul(op.num_embeddings, op.dim), bytes_of(checked_mul(op.num_embeddings, op.dim), bt));
    shape out = x.s;
    out.dim[static_cast<std::size_t>(out.rank++)] = op.dim;
    return c.s.make(out, bt, op.output_requires_grad);
  }
};

constexpr layer frozen_embedding(std::int64_t num_embeddings, std::int64_t dim, base_weights base = base_weights::same,
                                 bool output_requires_grad = false) {
  return as_layer(frozen_embedding_op{num_embeddings, dim, base, output_requires_grad});
}

/// PEFT's modules_to_save (peft/utils/other.py, ModulesToSaveWrapper.update): the original module
/// stays, frozen and no longer run (`original_module.requires_grad_(False)`), and
/// `copy.deepcopy(original_module)` trains in its place, in the original's type: a bf16 base's
/// copy is a bf16 parameter, with a bf16 gradient and bf16 optimizer state (torch.optim's
/// zeros_like), and autocast casts nothing of it. `stored`: the base's storage (a quantized base
/// keeps its unquantized modules in 16 bit, as frozen_embedding). The copy runs the op `Base`
/// does, in a context whose parameter type is the copy's (layer_ctx::own_stored_type).
template <class Base>
constexpr detail::value run_saved_copy(detail::layer_ctx& c, const Base& base, const detail::value& x, std::int64_t elements, base_weights stored) {
  const dtype t = c.stored_type(stored);
  detail::layer_ctx copy = c.sub(0);
  copy.own_stored_type = t != c.s.types.parameters, copy.stored_as = t;
  const detail::value y = op_traits<Base>::lower(copy, base, x);
  if (copy.own_stored_type) copy.own_type_count = copy.parameter_count, copy.own_type_bytes = bytes_of(copy.parameter_count, t);
  c.absorb(copy, 0);
  c.add_frozen_base(elements, bytes_of(elements, t));  // the original (a tied one: its weight is counted where it lives)
  return y;
}

/// nn.Linear(in, out) in PEFT's modules_to_save (a causal LM's lm_head, a classifier's score,
/// BERT's classifier, which has a bias: `bias`): `original_tied`: the original's weight is the
/// embedding's (tie_word_embeddings), so only the copy adds parameters.
struct saved_linear_op {
  std::int64_t out_features = {};
  base_weights stored = {};
  flag original_tied = false;
  flag bias = false;
};
template <>
struct op_traits<saved_linear_op> {
  static constexpr const char* name = "linear (modules_to_save)";
  static constexpr detail::value lower(detail::layer_ctx& c, const saved_linear_op& op, const detail::value& x) {
    if (op.out_features <= 0 || x.s.rank < 1) detail::invalid_layer_argument();
    const auto original = (op.original_tied ? 0 : checked_mul(x.s.last(), op.out_features)) + (op.bias ? op.out_features : 0);
    return run_saved_copy(c, linear_op{op.out_features, op.bias, false}, x, original, op.stored);
  }
  static constexpr std::int64_t flops(const saved_linear_op& op, const shape& in, const shape& out) {
    return op_traits<linear_op>::flops(linear_op{op.out_features, op.bias, false}, in, out);
  }
};
constexpr layer saved_linear(std::int64_t out_features, base_weights stored = base_weights::same, bool original_tied = false, bool bias = false) {
  return as_layer(saved_linear_op{out_features, stored, original_tied, bias});
}

/// nn.Embedding(num, dim) in PEFT's modules_to_save (embed_tokens: new tokens trained whole).
struct saved_embedding_op {
  std::int64_t num_embeddings = {};
  std::int64_t dim = {};
  base_weights stored = {};
};
template <>
struct op_traits<saved_embedding_op> {
  static constexpr const char* name = "embedding (modules_to_save)";
  static constexpr detail::value lower(detail::layer_ctx& c, const saved_embedding_op& op, const detail::value& x) {
    return run_saved_copy(c, embedding_op{op.num_embeddings, op.dim}, x, checked_mul(op.num_embeddings, op.dim), op.stored);
  }
};
constexpr layer saved_embedding(std::int64_t num_embeddings, std::int64_t dim, base_weights stored = base_weights::same) {
  return as_layer(saved_embedding_op{num_embeddings, dim, stored});
}

/// lora_attention_op::flags: PEFT's DoRA and input cast; the q/k norms' weight type + 1 in bits
/// 8-11 (0: none), their qk_norm_kind in bits 12-13.
enum peft_flag : std::int64_t { peft_dora = 1, peft_cast_input = 2 };

/// transformers' LlamaAttention (rotary, grouped-query, flash kernel, no biases but Qwen2's on
/// q, k, v) with frozen q/k/v/o projections and LoRA adapters of rank `rank` on the
/// projections in `targets`; heads of head_width channels (0: width / heads; Gemma).
struct lora_attention_op {
  std::int64_t width = {};
  std::int64_t heads = {};
  std::int64_t kv_heads = {};
  std::int64_t rank = {};
  std::int64_t targets = {};  ///< lora_target bits (q_proj, k_proj, v_proj, o_proj; or Phi-3's qkv_proj, o_proj)
  std::int64_t dropout = {};  ///< on the adapter input, percent
  base_weights base = {};
  std::int64_t head_width = {};  ///< packed as attention_op's (head_layout)
  flag qkv_bias = {};  ///< frozen biases on q, k, v (Qwen2)
  /// peft_flag bits: PEFT's use_dora on every adapted projection, its _cast_input_dtype
  /// (lora_projection); one word with the q/k norms' storage and kind (a record holds max_op_fields)
  std::int64_t flags = peft_cast_input;
  /// q_proj, k_proj, v_proj bits whose (Qwen2) biases train: PEFT's LoraConfig.bias "all" (every
  /// bias) or "lora_only" (those of adapted projections)
  std::int64_t trained_biases = {};
};

/// lora_attention_op::flags: bits 0-7 peft_flag, 8-11 the q/k norms' storage, 12-13 their kind,
/// 16-17 the scores, 18 training_kv_cache, 19 per_sample_rope_tables, 20 positional_layer_inputs,
/// 21 fp32_rope_tables, 22 batch_attention_mask, 23 padded_batch.
constexpr std::int64_t lora_attention_flags(bool dora, bool cast_input, std::optional<base_weights> qk_norm, qk_norm_kind kind,
                                            scores_impl scores = scores_impl::sdpa, bool training_cache = false, bool per_sample_tables = false,
                                            bool positional_inputs = false, bool fp32_tables = false, bool batch_mask = false,
                                            bool padded = false) {
  if (qk_norm.has_value() != (kind != qk_norm_kind::none)) detail::invalid_layer_argument();
  return (dora ? std::int64_t{peft_dora} : 0) | (cast_input ? std::int64_t{peft_cast_input} : 0) |
         (qk_norm ? (static_cast<std::int64_t>(*qk_norm) + 1) << 8 | static_cast<std::int64_t>(kind) << 12 : 0) |
         static_cast<std::int64_t>(scores) << 16 | std::int64_t{training_cache} << 18 | std::int64_t{per_sample_tables} << 19 |
         std::int64_t{positional_inputs} << 20 | std::int64_t{fp32_tables} << 21 | std::int64_t{batch_mask || padded} << 22 |
         std::int64_t{padded} << 23;
}

namespace detail {

constexpr std::int64_t rank_for(const lora_attention_op& op, std::int64_t bit) { return op.targets & bit ? op.rank : 0; }

/// The rotary flash path of multi_head_attention with lora_projection for q, k, v, o.
constexpr value lora_attention(layer_ctx& c, const lora_attention_op& op, const value& x) {
  auto& s = c.s;
  const auto D = op.width, H = op.heads, KVH = op.kv_heads > 0 ? op.kv_heads : op.heads;
  if (D <= 0 || H <= 0 || op.dropout < 0 || op.dropout > 100) invalid_layer_argument();
  if (x.s.rank != 2 || x.s[1] != D) shape_mismatch_between_layers();
  const auto [hw, rotary, window, local] = unpack_head_layout(op.head_width);
  if (op.head_width < 0) invalid_layer_argument();
  if ((hw == 0 && D % H != 0) || H % KVH != 0) heads_do_not_divide_model_width();
  const bool fused = (op.targets & qkv_proj) != 0;
  if ((op.targets & ~std::int64_t{q_proj | k_proj | v_proj | o_proj | qkv_proj}) != 0 || (fused && (op.targets & (q_proj | k_proj | v_proj)) != 0))
    unknown_lora_target_module();
  const auto d = hw > 0 ? hw : D / H, L = x.s[0], inner = H * d, rotated = rotary > 0 ? rotary : d;
  const bool bias = op.qkv_bias;
  const auto bt = static_cast<std::int64_t>(op.base);
  const dtype mt = c.matmul_type(x.type);
  const bool dora = (op.flags & peft_dora) != 0, cast_input = (op.flags & peft_cast_input) != 0;
  const peft_forward peft{dora, cast_input};
  const auto bias_of = [&](std::int64_t bit) { return peft_forward{dora, cast_input, bias && (op.trained_biases & bit) != 0}; };
  if ((op.trained_biases & ~std::int64_t{q_proj | k_proj | v_proj}) != 0 || (op.trained_biases != 0 && (!bias || fused))) invalid_layer_argument();
  value q{}, k{}, v{};
  if (fused) {  // Phi-3: one qkv_proj (and one adapter) whose output q, k and v are slices of
    value qkv = lora_projection(c, x, inner + 2 * KVH * d, op.rank, op.dropout, bt, 0, bias, false, peft);
    q = s.view(qkv, make_shape(L, inner)), k = s.view(qkv, make_shape(L, KVH * d)), v = s.view(qkv, make_shape(L, KVH * d));
    s.release(qkv);
  } else {
    q = lora_projection(c, x, inner, rank_for(op, q_proj), op.dropout, bt, 0, bias, false, bias_of(q_proj));
    k = lora_projection(c, x, KVH * d, rank_for(op, k_proj), op.dropout, bt, 2, bias, false, bias_of(k_proj));
    v = lora_projection(c, x, KVH * d, rank_for(op, v_proj), op.dropout, bt, 4, bias, false, bias_of(v_proj));
  }
  if (const auto norms = (op.flags >> 8) & 0xF; norms != 0) {  // Qwen3's, Gemma 3's, OLMo 2's q_norm, k_norm: frozen, keys 8 and 9 (past the projections')
    if (fused) invalid_layer_argument();
    head_rms_norms(c, q, k, d, 8, static_cast<base_weights>(norms - 1), true, static_cast<qk_norm_kind>((op.flags >> 12) & 3));
  }
  const bool keyword = ((op.flags >> 20) & 1) == 0;
  const auto [qr, kr, heads_first] = rotary_qk(s, q, k, d, rotated, x.type, mt, {local, fused, ((op.flags >> 19) & 1) != 0, keyword, ((op.flags >> 21) & 1) != 0});  // Phi-3's cat (rotary_op)
  s.release(q);
  s.release(k);
  const attention_dims a{D, H, KVH, d, L, L, mt, inner, rotated, window, local, keyword, ((op.flags >> 22) & 1) != 0, ((op.flags >> 23) & 1) != 0};
  const bool cached = caches_kv(s, ((op.flags >> 18) & 1) != 0);  // DynamicCache's copies of k and v
  const value kc = cached ? dynamic_cache_copy(s, kr) : kr, vc = cached ? dynamic_cache_copy(s, v) : v;
  const auto scores = static_cast<scores_impl>((op.flags >> 16) & 3);
  const eager_layout layout{heads_first, cached};
  auto [o, kind] = scores == scores_impl::sdpa ? windowed_sdpa(s, a, qr, kc, vc, true, 0, promoted_type(mt, x.type) != mt)
                                               : sdpa_output{eager_attention(s, a, qr, kc, vc, x.type, scores == scores_impl::eager_softcap, layout, 0),
                                                             sdpa_kernel::math};  // eager's output: [B, H, L, d], as the math path's
  if (sdpa_output_needs_copy(kind, false, heads_first)) {  // transpose(1, 2).contiguous()
    value oc = copy(s, o, o.s);
    s.release(o);
    o = oc;
  }
  value y = lora_projection(c, o, D, rank_for(op, o_proj), op.dropout, bt, 6, false, false, peft);
  s.release(o);
  return y;
}

}  // namespace detail

template <>
struct op_traits<lora_attention_op> {
  static constexpr const char* name = "attention (lora)";
  static constexpr detail::value lower(detail::layer_ctx& c, const lora_attention_op& op, const detail::value& x) {
    return detail::lora_attention(c, op, x);
  }
  static constexpr std::int64_t flops(const lora_attention_op& op, const shape& in, const shape&) {
    const auto D = op.width, H = op.heads > 0 ? op.heads : 1, L = in[0];
    const auto hw = unpack_head_layout(op.head_width).width;
    const auto d = hw > 0 ? hw : D / H, inner = H * d;
    const auto kvw = 2 * (op.kv_heads > 0 ? op.kv_heads : H) * d;
    return 2 * L * D * inner * 2 + 2 * L * D * kvw + 2 * 2 * L * L * inner + 2 * L * op.rank * 8 * D;
  }
};

/// What lora_attention builds: LlamaAttention's shape, the adapters and the frozen parts.
struct lora_attention_options {
  std::int64_t width = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;           ///< grouped-query key/value heads (0: heads)
  std::int64_t rank = 0;               ///< LoRA's r on every adapted projection
  std::int64_t targets = 0;            ///< the adapted projections (lora_target bits: q_proj … o_proj, qkv_proj)
  std::int64_t dropout_percent = 0;    ///< lora_dropout
  base_weights base = base_weights::same;
  std::int64_t head_width = 0;         ///< channels per head (0: width / heads)
  bool qkv_bias = false;               ///< Qwen2's frozen q/k/v biases
  bool dora = false;                   ///< PEFT's DoRA on the adapters
  bool cast_input = true;              ///< PEFT >= 0.15's input cast (lora_projection)
  std::int64_t trained_biases = 0;     ///< the q/k/v biases that train (lora_target bits; needs qkv_bias)
  /// frozen q_norm and k_norm, their weights stored as given (layers/attention.hpp qk_norm)
  std::optional<base_weights> qk_norm = std::nullopt;
  /// which those q/k norms are (Qwen3's per head — the default with qk_norm —, Gemma 3's, OLMo 2's
  /// whole projection: attention options qk_norm, gemma_qk_norm, olmo2_qk_norm)
  qk_norm_kind qk_kind = qk_norm_kind::none;
  std::int64_t rotary_width = 0;       ///< channels of a head RoPE rotates (0: all; attention option rotary_dims)
  std::int64_t window = 0;             ///< a sliding window through SDPA's mask (attention option attention_window)
  bool local_rope = false;             ///< the model's second RoPE tables (Gemma 3's sliding layers: attention option local_rope)
  /// the scores through SDPA or transformers' eager_attention_forward (attention options eager_scores,
  /// eager_softcapped_scores)
  scores_impl scores = scores_impl::sdpa;
  bool training_cache = false;         ///< k and v through a DynamicCache in training (attention option training_kv_cache)
  bool per_sample_rope_tables = false; ///< [B, T, d] RoPE tables (attention option per_sample_rope_tables)
  bool positional_layer_inputs = false; ///< tables and masks passed positionally (attention option positional_layer_inputs)
  bool fp32_rope_tables = false;       ///< fp32 RoPE tables whatever the hidden states' type (attention option fp32_rope_tables)
  bool batch_attention_mask = false;   ///< called with an attention_mask: masks one per sample (attention option batch_attention_mask)
  bool padded_batch = false;           ///< that attention_mask pads some sequence: no mask skipped (attention option padded_batch)
};
/// LlamaAttention with frozen projections and LoRA adapters (see lora_attention_op), as `o` says.
constexpr layer lora_attention(const lora_attention_options& o) {
  const auto qk_kind = o.qk_norm && o.qk_kind == qk_norm_kind::none ? qk_norm_kind::per_head : o.qk_kind;
  return as_layer(lora_attention_op{o.width, o.heads, o.kv_heads, o.rank, o.targets, o.dropout_percent, o.base,
                                    pack_head_layout({o.head_width, o.rotary_width, o.window, o.local_rope}), o.qkv_bias,
                                    lora_attention_flags(o.dora, o.cast_input, o.qk_norm, qk_kind, o.scores, o.training_cache, o.per_sample_rope_tables,
                                                         o.positional_layer_inputs, o.fp32_rope_tables, o.batch_attention_mask,
                                                         o.padded_batch),
                                    o.trained_biases});
}

/// Parses PEFT's `target_modules` as a comma-separated list ("q_proj,v_proj", "all-linear")
/// into lora_target bits; an unknown name is the compile-time error unknown_lora_target_module.
constexpr std::int64_t parse_lora_targets(std::string_view list) {
  constexpr std::string_view names[] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "qkv_proj",
                                        "gate_up_proj", "w1", "w2", "w3", "gate", "c_attn", "c_proj", "c_fc", "query", "key", "value", "dense",
                                        "q", "k", "v", "o", "wi", "wo", "embed_tokens"};
  std::int64_t bits = 0;
  while (true) {
    const auto comma = list.find(',');
    const auto name = list.substr(0, comma);
    std::int64_t bit = name == "all-linear" || name == "all_linear" ? std::int64_t{all_linear} : 0;
    for (std::size_t i = 0; i < std::size(names); ++i)
      if (name == names[i]) bit = std::int64_t{1} << i;
    if (bit == 0) detail::unknown_lora_target_module();
    bits |= bit;
    if (comma == std::string_view::npos) return bits;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace gpubudget
