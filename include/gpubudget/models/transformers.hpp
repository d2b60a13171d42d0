// gpubudget/models/transformers.hpp — Hugging Face transformer families: BERT (post-norm encoder
// with pooler), GPT-2 (models::gpt, re-exported here), and Llama-style decoders (Llama 2,
// Llama 3, Mistral): RMSNorm, grouped-query flash attention with rotary embeddings, SwiGLU MLP,
// untied LM head. Sizes are config structs; sequence length is a budget parameter.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/gpt.hpp>
#include <gpubudget/models/lora_config.hpp>
#include <gpubudget/models/peft.hpp>
#include <gpubudget/models/t5.hpp>

namespace gpubudget::models {

// --- BERT ---------------------------------------------------------------------------------------

/// Sizes of a BERT encoder (transformers BertModel).
struct bert_config {
  std::int64_t vocab = 30522;
  std::int64_t max_positions = 512;
  std::int64_t type_vocab = 2;
  std::int64_t width = 768;
  std::int64_t layers = 12;
  std::int64_t heads = 12;
  std::int64_t ffn = 3072;
  std::int64_t dropout_percent = 10;  ///< hidden dropout (hidden_dropout_prob)
  std::int64_t attention_dropout_percent = 10;  ///< attention_probs_dropout_prob
  std::int64_t seq = 512;             ///< tokens per sample in the step being budgeted
  bool pooler = true;                 ///< BertPooler: tanh(Linear(first token)); the output is then [width]
  /// separate_qkv: transformers 4's eager BertSelfAttention (the zoo's bert-base, the CPU and CUDA
  /// reference cases); separate_qkv_sdpa: transformers 5's default attn_implementation="sdpa".
  attention_impl attention = attention_impl::separate_qkv;
  /// the batch is padded (a collator pads the shorter sequences, DataCollatorWithPadding: the
  /// attention_mask has zeros): transformers 5's SDPA (separate_qkv_sdpa) then gets a [B, 1, T, T]
  /// mask in every layer (attention option padded_batch); transformers 4's eager attention adds its
  /// [B, 1, 1, T] additive mask padded or not, so there it changes nothing
  bool padded_batch = false;
};

/// BertAttention's attention op (self.query, .key, .value, output.dense) with `extra` options (LoRA
/// adapters), masked where the batch is padded (bert_config::padded_batch).
template <class... Extra>
constexpr layer bert_attention(const bert_config& b, Extra... extra) {
  const auto with = [&](auto... more) {
    return attention(b.width, heads(b.heads), b.attention, attention_dropout(b.attention_dropout_percent), projection_names::bert, extra..., more...);
  };
  return b.padded_batch && b.attention == attention_impl::separate_qkv_sdpa ? with(padded_batch) : with();
}

/// BertLayer: post-norm. LN(x + dropout(attn(x))) with separate q, k, v projections
/// (attention_impl::separate_qkv) and materialized scores, then LN(h + dropout(Linear(GELU(Linear(h))))).
/// Module names are transformers' BertLayer's; the attention op holds attention.self.query, .key,
/// .value and attention.output.dense as its parts (projection_names::bert).
constexpr auto bert_layer(const bert_config& b) {
  return sequential(residual(named("attention", bert_attention(b)),
                             named("attention.output.dropout", dropout(b.dropout_percent))),
                    named("attention.output.LayerNorm", layer_norm()),
                    residual(named("intermediate.dense", linear(b.ffn)), named("intermediate.intermediate_act_fn", gelu()),
                             named("output.dense", linear(b.width)), named("output.dropout", dropout(b.dropout_percent))),
                    named("output.LayerNorm", layer_norm()));
}

/// BertModel: word embeddings + token types + positions → LayerNorm → dropout → `layers`
/// BertLayers; with the pooler, tanh(Linear(hidden[0])) is the output ([width]), otherwise the
/// sequence output [seq, width].
constexpr auto bert_encoder(const bert_config& b) {
  // BertModel's module names (a BertFor... task model puts them under `bert.`)
  return sequential(tokens(b.seq), named("embeddings.word_embeddings", embedding(b.vocab, b.width)),
                    named("embeddings", bert_embeddings(b.type_vocab, b.max_positions)), named("embeddings.LayerNorm", layer_norm()),
                    named("embeddings.dropout", dropout(b.dropout_percent)), named("encoder.layer", repeat(b.layers, bert_layer(b))));
}
constexpr auto bert(const bert_config& b) {
  return sequential(bert_encoder(b), named("pooler", sequential(select_token(0), named("dense", linear(b.width)), named("activation", tanh()))));
}
/// BertForSequenceClassification (transformers models/bert/modeling_bert.py): BertModel with
/// its pooler, dropout (classifier_dropout, else hidden_dropout_prob) and `classifier` =
/// Linear(hidden_size, num_labels). bert-base-uncased with 2 labels: 109,483,778 parameters
/// (109,482,240 + 768 x 2 + 2).
constexpr auto bert_seq_cls(const bert_config& b, std::int64_t labels, std::int64_t classifier_dropout_percent) {
  return sequential(named("bert", bert(b)), named("dropout", dropout(classifier_dropout_percent)), named("classifier", linear(labels)));
}
/// BertForMaskedLM (modeling_bert.py): BertModel without the pooler, then cls.predictions:
/// transform (Linear(hidden, hidden), GELU, LayerNorm) and `decoder`, a Linear(hidden, vocab)
/// whose weight is the word embeddings' (tied) and whose bias is its own [vocab] parameter; the
/// logits [seq, vocab] are the output. bert-base-uncased: 109,514,298 parameters (108,891,648
/// without the pooler + 592,128 transform + 30,522 decoder bias).
constexpr auto bert_masked_lm(const bert_config& b) {
  return sequential(tokens(b.seq), named("bert.embeddings.word_embeddings", shared(1, embedding(b.vocab, b.width))),
                    named("bert.embeddings", bert_embeddings(b.type_vocab, b.max_positions)), named("bert.embeddings.LayerNorm", layer_norm()),
                    named("bert.embeddings.dropout", dropout(b.dropout_percent)), named("bert.encoder.layer", repeat(b.layers, bert_layer(b))),
                    named("cls.predictions.transform.dense", linear(b.width)), named("cls.predictions.transform.transform_act_fn", gelu()),
                    named("cls.predictions.transform.LayerNorm", layer_norm()), named("cls.predictions.decoder", shared(1, tied_linear(b.vocab))),
                    named("cls.predictions.bias", tied_linear_bias(b.vocab)));
}
/// bert-base-uncased: 109,482,240 parameters with the pooler.
constexpr bert_config bert_base(std::int64_t seq = 512) { return {30522, 512, 2, 768, 12, 12, 3072, 10, 10, seq, true}; }
/// bert-large-uncased.
constexpr bert_config bert_large(std::int64_t seq = 512) { return {30522, 512, 2, 1024, 24, 16, 4096, 10, 10, seq, true}; }

// --- GPT-2 (models::gpt, gpt.hpp) ----------------------------------------------------------------
// gpt2_small 124,439,808 · gpt2_medium 354,823,168 · gpt2_large 774,030,080 · gpt2_xl 1,557,611,200
// (tied head, 1024 learned positions).

// --- Llama-style decoders -------------------------------------------------------------------------

/// The gated MLP's activation: SwiGLU (Llama, Mistral, Qwen2, Phi-3) or GeGLU with the tanh
/// approximation (Gemma's gelu_pytorch_tanh).
enum class gated_activation : std::int64_t { silu, gelu_tanh };

/// Sizes of a Llama-style decoder (transformers LlamaForCausalLM, MistralForCausalLM,
/// Qwen2ForCausalLM, GemmaForCausalLM, Phi3ForCausalLM).
struct llama_config {
  std::int64_t vocab = 32000;
  std::int64_t width = 4096;
  std::int64_t layers = 32;
  std::int64_t heads = 32;
  std::int64_t kv_heads = 32;      ///< grouped-query attention: key/value heads
  std::int64_t ffn = 11008;        ///< SwiGLU intermediate size
  std::int64_t context = 4096;     ///< max_position_embeddings (rotary: no parameters)
  std::int64_t seq = 4096;         ///< tokens per sample in the step being budgeted
  bool checkpoint_blocks = false;  ///< torch.utils.checkpoint around each decoder layer
  /// tokens each query attends to (0: all): the KV cache holds at most this many, and through SDPA
  /// a sequence of this many tokens or more gets transformers' mask (attention option attention_window)
  std::int64_t sliding_window = 0;
  /// the attention kernel takes the window itself, no mask: flash-attn 2 (attn_implementation
  /// "flash_attention_2": its window_size argument) or vLLM's kernels
  bool kernel_window = false;
  /// attn_implementation "eager": transformers' eager_attention_forward, the scores materialized
  /// (attention option eager_scores) where SDPA keeps none; with attention_softcap Gemma 2's
  /// attn_logit_softcapping on them (eager_softcapped_scores), which only the eager path applies
  bool eager_attention = false;
  bool attention_softcap = false;
  std::int64_t head_dim = 0;       ///< channels per head (0: width / heads)
  bool qkv_bias = false;           ///< q, k, v projections with a bias, o_proj without (Qwen2)
  bool tied_head = false;          ///< lm_head shares the token embedding's weight (tie_word_embeddings)
  gated_activation activation = gated_activation::silu;
  bool scaled_embedding = false;   ///< embeddings × √width before the first layer (Gemma's normalizer)
  /// Phi-3's fused qkv_proj and gate_up_proj: the same weights and activations as separate
  /// projections, but one LoRA adapter each (phi3_lora)
  bool fused_projections = false;
  /// Qwen3's q_norm and k_norm: an RMSNorm over each head's channels on q and k before RoPE
  /// (the attention option qk_norm)
  bool qk_norm = false;
  /// Gemma's RMSNorm everywhere: (1 + weight) in fp32, cast back (gemma_rms_norm)
  bool gemma_norms = false;
  /// Gemma 3's layers (gemma3): norms before and after the attention and the MLP, Gemma's q_norm and
  /// k_norm, and in every gemma3_period layers all but the last sliding-window layers on local RoPE
  bool gemma3 = false;
  /// Gemma 2's layers (visit_gemma2): Gemma 3's four norms a layer without its q/k norms, in every
  /// gemma2_period layers the first within sliding_window, every layer on the one RoPE table
  bool gemma2 = false;
  /// the logits soft-capped, tanh(logits / cap) · cap after the LM head (Gemma 2's
  /// final_logit_softcapping; visit_gemma2 builds it): softcap_op, tanh's output kept
  bool logit_softcap = false;
  /// OLMo 2's layers (olmo2): an RMSNorm after the attention and after the MLP, none before
  /// them; q_norm and k_norm over the whole q and k projections; Olmo2RMSNorm (weight · h in
  /// fp32, cast back) everywhere
  bool olmo2 = false;
  /// Granite's multipliers (granite): embeddings × embedding_multiplier, each sublayer's output ×
  /// residual_multiplier before its residual add, the logits ÷ logits_scaling — Python numbers,
  /// so each a new tensor with nothing saved; Llama's layers otherwise
  bool granite = false;
  /// OLMo 3's layers (visit_olmo3; olmo2 set too): OLMo 2's, and in every olmo3_period layers all
  /// but the last within sliding_window, every layer on the one RoPE table
  bool olmo3 = false;
  /// channels of a head RoPE rotates, the rest concatenated back (0: all; Phi-3's
  /// partial_rotary_factor · head_dim: the attention option rotary_dims)
  std::int64_t rotary_dim = 0;
  /// the config's use_cache (transformers' PretrainedConfig default: true): transformers >= 5 then
  /// runs k and v through a DynamicCache in a training forward too (attention option
  /// training_kv_cache); false for a model written out without one
  bool use_cache = true;
  /// [B, T, d] RoPE tables, one per sample (attention option per_sample_rope_tables): position_ids of
  /// the batch's shape (generate() with an attention mask, a model written out so); transformers'
  /// training forward without position_ids makes one [1, T, d] pair for the batch
  bool per_sample_rope = false;
  /// the RoPE tables and masks reach a checkpointed layer as positional arguments (attention option
  /// positional_layer_inputs: saved by the checkpoint); transformers passes them by keyword (held, not saved)
  bool positional_layer_inputs = false;
  /// the model is called with an attention_mask (generate() always passes one; a collated batch
  /// does): its sliding-window masks are one per sample (attention option batch_attention_mask)
  bool attention_mask_passed = false;
  /// that attention_mask pads some sequence (a collator's padded batch, DataCollatorWithPadding;
  /// implies attention_mask_passed): every SDPA call then gets a mask (attention option padded_batch)
  bool padded_batch = false;

  constexpr std::int64_t per_head() const { return head_dim > 0 ? head_dim : width / heads; }
  /// The embeddings are scaled before the first layer (Gemma's √width, Granite's embedding_multiplier).
  constexpr bool scales_embedding() const { return scaled_embedding || granite; }
  /// Gemma 2's or Gemma 3's layers: four norms a layer, sliding and full attention alternating.
  constexpr bool gemma_alternating() const { return gemma2 || gemma3; }
  /// The window SDPA is given as a mask (attention option attention_window): none where the kernel takes it.
  constexpr std::int64_t mask_window() const { return kernel_window ? 0 : sliding_window; }
};

/// `g` as a decoder written out by hand after transformers' modeling code (a user's port, or the
/// project's measure26_llm.py): no DynamicCache (use_cache false), RoPE tables of the batch's
/// shape (per_sample_rope) passed to checkpointed layers positionally (positional_layer_inputs).
/// transformers 5 itself does none of the three (op_rules.md L27, L28). A Mixtral port's loop over
/// expert modules is moe_config::impl's moe_impl::expert_modules.
constexpr llama_config hand_written_decoder(llama_config g) {
  g.use_cache = false, g.per_sample_rope = true, g.positional_layer_inputs = true;
  return g;
}

/// How the family's attention computes its scores: SDPA, or eager (Gemma 2's soft-capped).
constexpr scores_impl family_scores(const llama_config& g) {
  if (g.attention_softcap && !g.eager_attention) gpubudget::detail::attention_softcap_needs_eager_attention();
  if (g.padded_batch && g.kernel_window) gpubudget::detail::padded_batch_under_flash_attention_2_is_not_modelled();
  return !g.eager_attention ? scores_impl::sdpa : g.attention_softcap ? scores_impl::eager_softcap : scores_impl::eager;
}
/// llama_attention with `extra` options.
template <class... Extra>
constexpr layer llama_attention_with(const llama_config& g, Extra... extra) {
  const auto with = [&](auto... scores) {
    return attention(g.width, heads(g.heads), attention_impl::flash, kv_heads(g.kv_heads), no_bias, rotary, head_dim(g.head_dim),
                     rotary_dims(g.rotary_dim), attention_window(g.mask_window()), qkv_bias(g.qkv_bias),
                     g.fused_projections ? projection_names::phi3 : projection_names::llama, extra..., scores...);
  };
  const auto masked = [&](auto... more) {
    return g.padded_batch ? with(more..., padded_batch) : g.attention_mask_passed ? with(more..., batch_attention_mask) : with(more...);
  };
  const auto inputs = [&](auto... more) { return g.positional_layer_inputs ? masked(more..., positional_layer_inputs) : masked(more...); };
  const auto tables = [&](auto... more) { return g.per_sample_rope ? inputs(more..., per_sample_rope_tables) : inputs(more...); };
  const auto cached = [&](auto... scores) { return g.use_cache ? tables(scores..., training_kv_cache) : tables(scores...); };
  const auto how = family_scores(g);
  return how == scores_impl::sdpa ? cached() : how == scores_impl::eager ? cached(eager_scores) : cached(eager_softcapped_scores);
}

/// The family's self-attention: grouped-query rotary flash attention, no biases except
/// Qwen2's on q, k, v; heads of per_head() channels; its projections named as transformers
/// names them (Phi-3: qkv_proj, o_proj); `extra`: further attention options.
template <class... Extra>
constexpr layer llama_attention(const llama_config& g, Extra... extra) {
  // OLMo 2's rotary embedding returns fp32 tables (OLMo 3's casts them: modeling_olmo3.py)
  if (g.olmo2 && !g.olmo3) return llama_attention_with(g, olmo2_qk_norm, fp32_rope_tables, extra...);
  if (g.olmo2) return llama_attention_with(g, olmo2_qk_norm, extra...);
  if (g.qk_norm) return llama_attention_with(g, qk_norm, extra...);
  return llama_attention_with(g, extra...);
}

/// The family's RMSNorm (Llama's; Gemma's (1 + w): llama_config::gemma_norms; OLMo 2's), its weight stored as `w`.
constexpr layer family_norm(const llama_config& g, base_weights w = base_weights::same) {
  return g.gemma_norms ? gemma_rms_norm(w) : g.olmo2 ? olmo2_rms_norm(w) : rms_norm(w);
}
/// The q/k norms of the family's attention (none, Qwen3's, Gemma 3's, OLMo 2's).
constexpr qk_norm_kind family_qk_norm(const llama_config& g) {
  return g.olmo2 ? qk_norm_kind::whole_projection : g.gemma3 ? qk_norm_kind::per_head_gemma : g.qk_norm ? qk_norm_kind::per_head : qk_norm_kind::none;
}

/// The scale after the token embedding: Gemma's × √width (a 0-dim tensor), Granite's ×
/// embedding_multiplier (a number), none for the others (an identity record).
constexpr layer family_embedding_scale(const llama_config& g) { return embedding_scale_then_rotary(g.scales_embedding(), g.granite); }

/// The gated MLP's activation: SiLU (SwiGLU), or Gemma's gelu_pytorch_tanh (GeGLU).
constexpr layer gate_activation(const llama_config& g) { return g.activation == gated_activation::gelu_tanh ? gelu() : silu(); }

/// LlamaDecoderLayer: x + o(flash(RoPE(q(RMSNorm(x))), RoPE(k(..)), v(..))), then
/// x + down(act(gate(RMSNorm(h))) * up(RMSNorm(h))). Gemma's RMSNorm scales by (1 + weight):
/// the same parameters, modelled as Llama's. Module names are transformers' (input_layernorm,
/// self_attn, post_attention_layernorm, mlp.gate_proj, ...); the attention is one op whose
/// projections are its parts self_attn.q_proj, k_proj, v_proj, o_proj (projection_names::llama).
/// `after`: parts on each sublayer's output before its residual add (Granite's residual_multiplier).
template <class... After>
constexpr auto llama_block(const llama_config& g, const After&... after) {
  return sequential(residual(named("input_layernorm", family_norm(g)), named("self_attn", llama_attention(g)), after...),
                    residual(named("post_attention_layernorm", family_norm(g)), named("mlp", gated_mlp(g.ffn, g.width, gate_activation(g))), after...));
}

/// The family's input and output around the decoder layers `blocks` (checkpointed as the caller
/// flagged them): token embedding (× √width for Gemma), the blocks, final RMSNorm, LM head (tied to
/// the embedding with tied_head), then `after` (Granite's logits scaling); the logits [seq, vocab]
/// are the output.
template <std::size_t N, class... After>
constexpr auto decoder_stack(const llama_config& g, model<N> blocks, const After&... after) {
  if (g.seq > g.context) gpubudget::detail::invalid_layer_argument();
  if (g.logit_softcap && !g.gemma2) gpubudget::detail::logit_softcap_is_built_by_visit_gemma2();
  if (g.head_dim < 0) gpubudget::detail::invalid_layer_argument();
  const std::int32_t tie = g.tied_head ? 1 : 0;  // shared(0, ...): a plain sequence
  return sequential(tokens(g.seq), named("model.embed_tokens", shared(tie, embedding(g.vocab, g.width))), family_embedding_scale(g),
                    named("model.layers", blocks), named("model.norm", family_norm(g)), named("lm_head", shared(tie, linear_op{g.vocab, false, g.tied_head})),
                    after...);
}
/// decoder_stack of one repeated block, each copy under torch.utils.checkpoint with checkpoint_blocks.
template <std::size_t N, class... After>
constexpr auto llama_stack(const llama_config& g, model<N> blocks, const After&... after) {
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;  // the block under the repeat
  return decoder_stack(g, blocks, after...);
}

/// A Llama-style causal LM: `layers` decoder layers between the embedding and the LM head
/// (Phi-3's packed projections: phi3).
constexpr auto llama(const llama_config& g) {
  if (g.fused_projections) gpubudget::detail::fused_projections_are_built_by_phi3();  // packed outputs save more (phi3)
  if (g.olmo2 || g.gemma_alternating() || g.granite) gpubudget::detail::layer_order_is_built_by_its_own_builder();
  return llama_stack(g, repeat(g.layers, llama_block(g)));
}

// --- Granite (transformers 5 models/granite/modular_granite.py, GraniteForCausalLM) ----------------

/// GraniteDecoderLayer: LlamaDecoderLayer whose sublayers' outputs are multiplied by
/// residual_multiplier before each residual add (`residual + hidden_states * m`: a new tensor,
/// nothing saved); the attention's scaling (attention_multiplier) is SDPA's `scale`.
constexpr auto granite_block(const llama_config& g) { return llama_block(g, named("residual_multiplier", scale())); }
/// GraniteForCausalLM: `layers` GraniteDecoderLayers between the embedding (× embedding_multiplier)
/// and the LM head, whose logits are divided by logits_scaling (a second logits tensor, nothing saved).
constexpr auto granite(const llama_config& g) {
  if (!g.granite) gpubudget::detail::invalid_layer_argument();
  return llama_stack(g, repeat(g.layers, granite_block(g)), named("logits_scaling", scale()));
}

// --- OLMo 2 (transformers 5 models/olmo2/modeling_olmo2.py, Olmo2ForCausalLM) ---------------------

/// Olmo2DecoderLayer: x + post_attention_layernorm(self_attn(x)), then
/// x + post_feedforward_layernorm(mlp(x)): the norms after the sublayers, none before; the
/// attention's q_norm and k_norm over the whole projections (olmo2_qk_norm).
constexpr auto olmo2_block(const llama_config& g) {
  return sequential(residual(named("self_attn", llama_attention(g)), named("post_attention_layernorm", family_norm(g))),
                    residual(named("mlp", gated_mlp(g.ffn, g.width, gate_activation(g))), named("post_feedforward_layernorm", family_norm(g))));
}
/// OLMo 2: `layers` Olmo2DecoderLayers between the embedding and the LM head.
constexpr auto olmo2(const llama_config& g) {
  if (!g.olmo2) gpubudget::detail::invalid_layer_argument();
  if (g.olmo3) gpubudget::detail::olmo3_layers_are_built_by_visit_olmo3();
  return llama_stack(g, repeat(g.layers, olmo2_block(g)));
}

// --- Gemma 3 (transformers 5 models/gemma3/modeling_gemma3.py, Gemma3ForCausalLM) ---------------

/// Gemma 3's period (Gemma3TextConfig's sliding_window_pattern, 6 in every released config): five
/// sliding-window layers, then one of full attention.
inline constexpr std::int64_t gemma3_period = 6;

/// Gemma 2's final_logit_softcapping after the LM head where llama_config::logit_softcap sets it
/// (else identities: a config's null): `logits = logits / cap`, `logits = torch.tanh(logits)`,
/// `logits = logits * cap`, three records of the model's own sequence, as Gemma2ForCausalLM rebinds
/// one name — each step's input freed when the next is made, two logits-sized tensors at a time (an
/// eval forward: hf_gemma2_infer_b2_t64 of pytorch-2.6-cpu-transformers.json). Its visitors put
/// these three after the LM head.
constexpr layer logits_by_cap(const llama_config& g) { return named("final_logit_softcapping.scale", scale_by_number_if(g.logit_softcap)); }
constexpr layer gemma2_logit_softcap(const llama_config& g) { return named("final_logit_softcapping", softcap_tanh_if(g.logit_softcap)); }
/// `g`'s layers without a window (Gemma 3's full-attention layers).
constexpr llama_config full_attention(llama_config g) {
  g.sliding_window = 0;
  return g;
}
/// Gemma3Attention: the family's rotary attention with Gemma's q_norm and k_norm on each head; a
/// sliding layer attends within sliding_window and reads the local RoPE tables, a full one the
/// global pair. Gemma2Attention (gemma2): the family's rotary attention on the one table, a
/// sliding layer within sliding_window (its attn_logit_softcapping is eager attention's alone).
constexpr layer gemma_attention(const llama_config& g, bool sliding) {
  if (!g.gemma3) return llama_attention(sliding ? g : full_attention(g));
  if (sliding) return llama_attention_with(g, gemma_qk_norm, local_rope);
  return llama_attention_with(full_attention(g), gemma_qk_norm);
}
/// Gemma3DecoderLayer and Gemma2DecoderLayer: x + post_attention_layernorm(self_attn(input_layernorm(x))),
/// then x + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x))), each a Gemma RMSNorm.
constexpr auto gemma_block(const llama_config& g, bool sliding) {
  return sequential(residual(named("input_layernorm", family_norm(g)), named("self_attn", gemma_attention(g, sliding)),
                             named("post_attention_layernorm", family_norm(g))),
                    residual(named("pre_feedforward_layernorm", family_norm(g)), named("mlp", gated_mlp(g.ffn, g.width, gate_activation(g))),
                             named("post_feedforward_layernorm", family_norm(g))));
}
namespace detail {
/// Each part of the sequence at record `at` of `m` under torch.utils.checkpoint (a decoder layer each).
template <std::size_t N>
constexpr void checkpoint_parts(model<N>& m, std::int32_t at, bool on) {
  for (std::int32_t p = at + 1; p < at + m.records[at].span; p += m.records[p].span) m.records[p].flags.checkpoint = on;
}
/// One period: `layer(true)` (a sliding layer) once per index, then `layer(false)` (the full one).
template <class Layer, std::size_t... Sliding>
constexpr auto alternating_period(Layer layer, std::index_sequence<Sliding...>) {
  const auto s = layer(true);
  return sequential((static_cast<void>(Sliding), s)..., layer(false));
}
}  // namespace detail
/// Decoder layers whose attention alternates (transformers' layer_types: Gemma 3, OLMo 3), `layer(sliding)`
/// each: repeats of `Period` layers (Period - 1 sliding, then one full), numbered as model.layers.N;
/// with checkpoint_blocks (llama_config's or training's) each layer checkpointed, as transformers'
/// GradientCheckpointingLayer does.
template <std::int64_t Period, class Layer>
constexpr auto alternating_groups(const llama_config& g, Layer layer) {
  static_assert(Period >= 2, "a period holds sliding layers and one full one");
  auto m = numbered_from(0, repeat(g.layers / Period, detail::alternating_period(layer, std::make_index_sequence<Period - 1>{})), Period);
  m.records[1].flags.parts_are_blocks = true;  // a repetition is a period of layers: training::checkpoint_blocks takes each
  m.records[1].flags.loop_steps = true;        // ... which transformers runs in one loop over its layers
  detail::checkpoint_parts(m, 1, g.checkpoint_blocks);
  return m;
}
/// ... and the sliding layers after the last whole period.
template <std::int64_t Period, class Layer>
constexpr auto alternating_rest(const llama_config& g, Layer layer) {
  auto m = numbered_from(g.layers / Period * Period, repeat(g.layers % Period, layer(true)));
  m.records[1].flags.checkpoint = g.checkpoint_blocks;
  return m;
}
/// Calls `f` with `g.layers` alternating decoder layers of `layer(sliding)`, `Period` to a period
/// (the type depends on whether they fill whole periods).
template <std::int64_t Period, class Layer, class F>
constexpr decltype(auto) visit_alternating_layers(const llama_config& g, Layer layer, F&& f) {
  if (g.layers < 1) gpubudget::detail::invalid_layer_argument();
  if (g.layers < Period) return f(alternating_rest<Period>(g, layer));
  if (g.layers % Period == 0) return f(alternating_groups<Period>(g, layer));
  // the rest continue transformers' one loop over the layers: each layer's input is held by that
  // loop while the layer runs, no longer (continue_sequence; the periods' own: flat_copies)
  return f(sequential(alternating_groups<Period>(g, layer), continue_sequence(alternating_rest<Period>(g, layer))));
}
/// Calls `f` with Gemma 3's decoder layers of `layer(sliding)`: gemma3_period to a period.
template <class Layer, class F>
constexpr decltype(auto) visit_gemma3_layers(const llama_config& g, Layer layer, F&& f) {
  if (!g.gemma3) gpubudget::detail::invalid_layer_argument();
  return visit_alternating_layers<gemma3_period>(g, layer, std::forward<F>(f));
}
/// Gemma3ForCausalLM as `f` takes it. llama_config::checkpoint_blocks and
/// training::checkpoint_blocks both checkpoint each decoder layer.
template <class F>
constexpr decltype(auto) visit_gemma3(const llama_config& g, F&& f) {
  return visit_gemma3_layers(g, [&g](bool sliding) { return gemma_block(g, sliding); },
                             [&](const auto& layers) { return f(decoder_stack(g, layers)); });
}

// --- Gemma 2 (transformers 5 models/gemma2/modular_gemma2.py, Gemma2ForCausalLM) ---------------

/// Gemma 2's period (Gemma2Config's default layer_types, as every released config has them): a
/// sliding-window layer, then one of full attention.
inline constexpr std::int64_t gemma2_period = 2;
/// Calls `f` with Gemma 2's decoder layers of `layer(sliding)`: gemma2_period to a period.
template <class Layer, class F>
constexpr decltype(auto) visit_gemma2_layers(const llama_config& g, Layer layer, F&& f) {
  if (!g.gemma2 || g.gemma3) gpubudget::detail::invalid_layer_argument();
  return visit_alternating_layers<gemma2_period>(g, layer, std::forward<F>(f));
}
/// Gemma2ForCausalLM as `f` takes it: visit_gemma2_layers' layers (gemma_block: four norms, no q/k
/// norms, one RoPE table) in decoder_stack, the logits soft-capped (final_logit_softcapping).
/// transformers 5 gives it "sdpa" unless attn_implementation says otherwise.
template <class F>
constexpr decltype(auto) visit_gemma2(const llama_config& g, F&& f) {
  return visit_gemma2_layers(g, [&g](bool sliding) { return gemma_block(g, sliding); },
                             [&](const auto& layers) { return f(decoder_stack(g, layers, logits_by_cap(g), gemma2_logit_softcap(g), logits_by_cap(g))); });
}

// --- OLMo 3 (transformers 5 models/olmo3/modular_olmo3.py, Olmo3ForCausalLM) ----------------------

/// Olmo3Config's default layer_types: three sliding-window layers, then one of full attention.
inline constexpr std::int64_t olmo3_period = 4;
/// The layers of a period whose last attends fully, the others within the sliding window
/// (visit_alternating_layers): Gemma 3's, Gemma 2's, OLMo 3's; 1 for one kind of layer throughout.
constexpr std::int64_t sliding_window_period(const llama_config& g) {
  return g.gemma3 ? gemma3_period : g.gemma2 ? gemma2_period : g.olmo3 ? olmo3_period : 1;
}
/// How many of `g`'s decoder layers attend within its sliding window: every other one of Gemma 2's,
/// five of six of Gemma 3's, three of four of OLMo 3's (and a last incomplete period's), every layer
/// of a model with one window (Mistral), none without.
constexpr std::int64_t sliding_window_layers(const llama_config& g) {
  if (g.sliding_window <= 0) return 0;
  const auto period = sliding_window_period(g);
  return period == 1 ? g.layers : g.layers - g.layers / period;
}

/// Olmo3DecoderLayer: Olmo2DecoderLayer whose attention, on a sliding layer, attends within
/// sliding_window; Olmo3Model makes one RoPE table for every layer (its rotary_emb).
constexpr auto olmo3_block(const llama_config& g, bool sliding) { return olmo2_block(sliding ? g : full_attention(g)); }
/// Calls `f` with OLMo 3's decoder layers of `layer(sliding)`: olmo3_period to a period.
template <class Layer, class F>
constexpr decltype(auto) visit_olmo3_layers(const llama_config& g, Layer layer, F&& f) {
  if (!g.olmo3 || !g.olmo2) gpubudget::detail::invalid_layer_argument();
  return visit_alternating_layers<olmo3_period>(g, layer, std::forward<F>(f));
}
/// Calls `f` with `g`'s decoder layers, `layer(sliding)` each: the sliding and full layers of
/// Gemma 2, Gemma 3 and OLMo 3 in their order (their visitors), any other family's one layer repeated.
template <class Layer, class F>
constexpr decltype(auto) visit_decoder_layers(const llama_config& g, Layer layer, F&& f) {
  if (g.gemma3) return visit_gemma3_layers(g, layer, f);
  if (g.gemma2) return visit_gemma2_layers(g, layer, f);
  if (g.olmo3) return visit_olmo3_layers(g, layer, f);
  return f(repeat(g.layers, layer(false)));
}
/// Olmo3ForCausalLM as `f` takes it. llama_config::checkpoint_blocks and
/// training::checkpoint_blocks both checkpoint each decoder layer.
template <class F>
constexpr decltype(auto) visit_olmo3(const llama_config& g, F&& f) {
  return visit_olmo3_layers(g, [&g](bool sliding) { return olmo3_block(g, sliding); }, [&](const auto& layers) { return f(decoder_stack(g, layers)); });
}

/// Phi3DecoderLayer (transformers 4.48 modeling_phi3.py): Llama's layer with one packed
/// qkv_proj whose q, k, v are slices (fused_qkv) and one gate_up_proj chunked into gate and up
/// (silu_of_halves): the same weights as separate projections; the packed outputs stay whole
/// while a slice is saved, and under autocast each packed projection casts its input once.
constexpr auto phi3_block(const llama_config& g) {
  return sequential(residual(named("input_layernorm", rms_norm()), named("self_attn", llama_attention(g, fused_qkv))),
                    residual(named("post_attention_layernorm", rms_norm()), named("mlp.gate_up_proj", linear(2 * g.ffn, no_bias)),
                             named("mlp.activation_fn", silu_of_halves()), named("mlp.down_proj", linear(g.width, no_bias))));
}
/// Phi-3 (phi3_mini): `layers` Phi3DecoderLayers between the embedding and the LM head.
constexpr auto phi3(const llama_config& g) { return llama_stack(g, repeat(g.layers, phi3_block(g))); }

/// The sequence-classification head transformers 5 gives every decoder of this family
/// (GenericForSequenceClassification, transformers/modeling_layers.py: LlamaFor-, MistralFor-,
/// Qwen2For-, GemmaFor-, Phi3For-, MixtralForSequenceClassification): the decoder without its LM
/// head, `score` = Linear(hidden_size, num_labels, bias=False) on every token's hidden state, then
/// the logits of the last non-padding token (an unpadded batch's last token) are the output.
/// (transformers refuses a batch of more than one without config.pad_token_id; with one set, the
/// memory is this.)
template <std::size_t N>
constexpr auto llama_seq_cls_stack(const llama_config& g, model<N> blocks, std::int64_t labels) {
  if (g.seq > g.context || g.head_dim < 0 || labels < 1) gpubudget::detail::invalid_layer_argument();
  if (g.logit_softcap) gpubudget::detail::logit_softcap_is_built_by_visit_gemma2();
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;  // the block under the repeat
  return sequential(tokens(g.seq), named("model.embed_tokens", embedding(g.vocab, g.width)), family_embedding_scale(g),
                    named("model.layers", blocks), named("model.norm", family_norm(g)), named("score", linear(labels, no_bias)), select_token(g.seq - 1));
}
/// LlamaForSequenceClassification (and Mistral, Qwen2, Gemma): Qwen2-0.5B with 2 labels has
/// 494,034,560 parameters (494,032,768 with its tied head, which adds none, + 896 x 2).
constexpr auto llama_seq_cls(const llama_config& g, std::int64_t labels) {
  if (g.fused_projections) gpubudget::detail::fused_projections_are_built_by_phi3();
  if (g.olmo2 || g.gemma_alternating() || g.granite) gpubudget::detail::layer_order_is_built_by_its_own_builder();
  return llama_seq_cls_stack(g, repeat(g.layers, llama_block(g)), labels);
}
/// Phi3ForSequenceClassification: Phi-3's packed layers under the same head.
constexpr auto phi3_seq_cls(const llama_config& g, std::int64_t labels) { return llama_seq_cls_stack(g, repeat(g.layers, phi3_block(g)), labels); }

/// Llama-2-7B: 6,738,415,616 parameters.
constexpr llama_config llama2_7b(std::int64_t seq = 4096) { return {32000, 4096, 32, 32, 32, 11008, 4096, seq, false}; }
/// Llama-2-13B: 13,015,864,320 parameters.
constexpr llama_config llama2_13b(std::int64_t seq = 4096) { return {32000, 5120, 40, 40, 40, 13824, 4096, seq, false}; }
/// Llama-2-70B: 68,976,648,192 parameters (8 key/value heads).
constexpr llama_config llama2_70b(std::int64_t seq = 4096) { return {32000, 8192, 80, 64, 8, 28672, 4096, seq, false}; }
/// Llama-3-8B: 8,030,261,248 parameters (vocabulary 128256, 8 key/value heads).
constexpr llama_config llama3_8b(std::int64_t seq = 8192) { return {128256, 4096, 32, 32, 8, 14336, 8192, seq, false}; }
/// Mistral-7B (v0.1): 7,241,732,096 parameters (8 key/value heads; its 4096-token sliding
/// window does not change a flash kernel's memory, but caps the KV cache: serving.hpp).
/// sliding_window 4096: mistralai/Mistral-7B-v0.1 config.json ("sliding_window": 4096).
constexpr llama_config mistral_7b(std::int64_t seq = 4096) { return {32000, 4096, 32, 32, 8, 14336, 32768, seq, false, 4096}; }
/// Phi-3-mini (4k context): 3,821,079,552 parameters. microsoft/Phi-3-mini-4k-instruct config.json:
/// hidden_size 3072, intermediate_size 8192, 32 layers, 32 heads (= key/value heads), vocab_size
/// 32064, max_position_embeddings 4096, untied head, no biases. Its packed qkv_proj and
/// gate_up_proj hold the same weights as separate projections (same parameters and activations);
/// under LoRA they are one module each (phi3_lora).
constexpr llama_config phi3_mini(std::int64_t seq = 4096) {
  llama_config g{32064, 3072, 32, 32, 32, 8192, 4096, seq, false, 0};
  g.fused_projections = true;
  return g;
}

/// Qwen2-0.5B: 494,032,768 parameters. Qwen/Qwen2-0.5B config.json: vocab_size 151936,
/// hidden_size 896, 24 layers, 14 heads, 2 key/value heads, intermediate_size 4864,
/// max_position_embeddings 131072, tie_word_embeddings true, use_sliding_window false;
/// Qwen2Attention: q_proj, k_proj, v_proj with bias, o_proj without.
constexpr llama_config qwen2_0_5b(std::int64_t seq = 131072) {
  llama_config g{151936, 896, 24, 14, 2, 4864, 131072, seq, false, 0};
  g.qkv_bias = true;
  g.tied_head = true;
  return g;
}
/// Qwen2-7B: 7,615,616,512 parameters. Qwen/Qwen2-7B config.json: vocab_size 152064,
/// hidden_size 3584, 28 layers, 28 heads, 4 key/value heads, intermediate_size 18944,
/// max_position_embeddings 131072, tie_word_embeddings false, use_sliding_window false.
constexpr llama_config qwen2_7b(std::int64_t seq = 131072) {
  llama_config g{152064, 3584, 28, 28, 4, 18944, 131072, seq, false, 0};
  g.qkv_bias = true;
  return g;
}
/// Qwen3-0.6B: 596,049,920 parameters (the model card's 0.6B, 0.44B without the embedding).
/// Qwen/Qwen3-0.6B config.json: vocab_size 151936, hidden_size 1024, 28 layers, 16 heads, 8
/// key/value heads, head_dim 128 (16 · 128 ≠ 1024), intermediate_size 3072,
/// max_position_embeddings 40960, tie_word_embeddings true, attention_bias false;
/// Qwen3Attention: an RMSNorm over head_dim on q and k (q_norm, k_norm) before RoPE.
constexpr llama_config qwen3_0_6b(std::int64_t seq = 40960) {
  llama_config g{151936, 1024, 28, 16, 8, 3072, 40960, seq, false, 0};
  g.head_dim = 128;
  g.tied_head = true;
  g.qk_norm = true;
  return g;
}
/// Qwen3-8B: 8,190,735,360 parameters (the model card's 8.2B, 6.95B without the embeddings).
/// Qwen/Qwen3-8B config.json: vocab_size 151936, hidden_size 4096, 36 layers, 32 heads, 8
/// key/value heads, head_dim 128, intermediate_size 12288, max_position_embeddings 40960,
/// tie_word_embeddings false.
constexpr llama_config qwen3_8b(std::int64_t seq = 40960) {
  llama_config g{151936, 4096, 36, 32, 8, 12288, 40960, seq, false, 0};
  g.head_dim = 128;
  g.qk_norm = true;
  return g;
}
/// What Gemma's released checkpoints share on top of `g`'s sizes: heads of 256 channels, the tied
/// embedding scaled by √hidden_size, GeGLU (gelu_pytorch_tanh) and Gemma's (1 + w) RMSNorm.
constexpr llama_config gemma_layers(llama_config g) {
  g.head_dim = 256;
  g.tied_head = true;
  g.activation = gated_activation::gelu_tanh;
  g.scaled_embedding = true;
  g.gemma_norms = true;
  return g;
}
/// ... and Gemma 3's layers (gemma3) on top of those.
constexpr llama_config gemma3_layers(llama_config g) {
  g = gemma_layers(g);
  g.gemma3 = true;
  return g;
}
/// Gemma-3-1B: 999,885,952 parameters (the model card's 1B). google/gemma-3-1b-it config.json
/// (model_type gemma3_text): vocab_size 262144, hidden_size 1152, 26 layers, 4 heads, 1 key/value
/// head, head_dim 256, intermediate_size 6912, max_position_embeddings 32768, sliding_window 512,
/// sliding_window_pattern 6, hidden_activation gelu_pytorch_tanh, tied embedding (× √hidden_size).
constexpr llama_config gemma3_1b(std::int64_t seq = 32768) { return gemma3_layers({262144, 1152, 26, 4, 1, 6912, 32768, seq, false, 512}); }
/// Gemma-3-270M: 268,098,176 parameters (the model card's 270M, 170M of them the embedding).
/// google/gemma-3-270m config.json: vocab_size 262144, hidden_size 640, 18 layers, 4 heads, 1
/// key/value head, head_dim 256, intermediate_size 2048, max_position_embeddings 32768,
/// sliding_window 512, five sliding layers and one full in every six.
constexpr llama_config gemma3_270m(std::int64_t seq = 32768) { return gemma3_layers({262144, 640, 18, 4, 1, 2048, 32768, seq, false, 512}); }
/// ... and Gemma 2's layers (gemma2) and soft-capped logits on top of those.
constexpr llama_config gemma2_layers(llama_config g) {
  g = gemma_layers(g);
  g.gemma2 = true;
  g.logit_softcap = true;
  return g;
}
/// Gemma-2-2B: 2,614,341,888 parameters (the model card's 2.6B). google/gemma-2-2b config.json
/// (model_type gemma2): vocab_size 256000, hidden_size 2304, 26 layers, 8 heads, 4 key/value heads,
/// head_dim 256, intermediate_size 9216, max_position_embeddings 8192, sliding_window 4096,
/// final_logit_softcapping 30.0, attn_logit_softcapping 50.0, query_pre_attn_scalar 256, tied.
constexpr llama_config gemma2_2b(std::int64_t seq = 8192) { return gemma2_layers({256000, 2304, 26, 8, 4, 9216, 8192, seq, false, 4096}); }
/// Gemma-2-9B: 9,241,705,984 parameters (the model card's 9B). google/gemma-2-9b config.json:
/// vocab_size 256000, hidden_size 3584, 42 layers, 16 heads, 8 key/value heads, head_dim 256,
/// intermediate_size 14336, max_position_embeddings 8192, sliding_window 4096.
constexpr llama_config gemma2_9b(std::int64_t seq = 8192) { return gemma2_layers({256000, 3584, 42, 16, 8, 14336, 8192, seq, false, 4096}); }
/// Gemma-2-27B: 27,227,128,320 parameters (the model card's 27B). google/gemma-2-27b's sizes as
/// transformers' own convert_paligemma2_weights_to_hf.py gives its Gemma 2 "27b": hidden_size 4608,
/// 46 layers, 32 heads, 16 key/value heads, head_dim 128 (32 · 128 ≠ 4608), intermediate_size 36864,
/// query_pre_attn_scalar 4608 / 32 (no bytes); vocab_size 256000, sliding_window 4096.
constexpr llama_config gemma2_27b(std::int64_t seq = 8192) {
  llama_config g = gemma2_layers({256000, 4608, 46, 32, 16, 36864, 8192, seq, false, 4096});
  g.head_dim = 128;
  return g;
}
/// Gemma-2B: 2,506,172,416 parameters. google/gemma-2b config.json: vocab_size 256000,
/// hidden_size 2048, 18 layers, 8 heads, 1 key/value head (multi-query), head_dim 256,
/// intermediate_size 16384, max_position_embeddings 8192, hidden_act gelu_pytorch_tanh
/// (GeGLU), tied embedding; GemmaModel scales the embeddings by √hidden_size.
constexpr llama_config gemma_2b(std::int64_t seq = 8192) { return gemma_layers({256000, 2048, 18, 8, 1, 16384, 8192, seq, false, 0}); }
/// `g`'s sizes as Granite's (granite; tied head, as granite-3.x ties it).
constexpr llama_config granite_layers(llama_config g) {
  g.granite = true;
  g.tied_head = true;
  return g;
}
/// Granite-3.1-2B: 2,533,531,648 parameters (the model card's 2.5B). ibm-granite/granite-3.1-2b-base
/// config.json (model_type granite; its sizes as public conversion code quotes them, not read from the
/// Hub here): vocab_size 49155, hidden_size 2048, 40 layers, 32 heads, 8 key/value heads,
/// intermediate_size 8192, max_position_embeddings 131072, tie_word_embeddings true.
constexpr llama_config granite3_2b(std::int64_t seq = 131072) { return granite_layers({49155, 2048, 40, 32, 8, 8192, 131072, seq, false, 0}); }
/// `g`'s sizes as OLMo 2's layers (olmo2).
constexpr llama_config olmo2_layers(llama_config g) {
  g.olmo2 = true;
  return g;
}
/// ... and OLMo 3's alternating windows (olmo3) on top of those.
constexpr llama_config olmo3_layers(llama_config g) {
  g = olmo2_layers(g);
  g.olmo3 = true;
  return g;
}
/// OLMo-2-0425-1B: 1,484,916,736 parameters (the model card's 1.48B). allenai/OLMo-2-0425-1B
/// config.json (model_type olmo2): vocab_size 100352, hidden_size 2048, 16 layers, 16 heads, 16
/// key/value heads, intermediate_size 8192, max_position_embeddings 4096, tie_word_embeddings false.
constexpr llama_config olmo2_1b(std::int64_t seq = 4096) { return olmo2_layers({100352, 2048, 16, 16, 16, 8192, 4096, seq, false, 0}); }
/// OLMo-2-1124-7B: 7,298,617,344 parameters (the model card's 7.3B). allenai/OLMo-2-1124-7B
/// config.json: vocab_size 100352, hidden_size 4096, 32 layers, 32 heads, 32 key/value heads,
/// intermediate_size 11008, max_position_embeddings 4096, tie_word_embeddings false.
constexpr llama_config olmo2_7b(std::int64_t seq = 4096) { return olmo2_layers({100352, 4096, 32, 32, 32, 11008, 4096, seq, false, 0}); }
/// Olmo-3-1025-7B: 7,298,011,136 parameters (the model card's 7B). allenai/Olmo-3-1025-7B
/// config.json (model_type olmo3; its values as public conversion and serving code quotes them,
/// not read from the Hub here): vocab_size 100278, hidden_size 4096, 32 layers, 32 heads, 32
/// key/value heads, intermediate_size 11008, max_position_embeddings 65536, sliding_window 4096 on
/// three layers of four, tie_word_embeddings false.
constexpr llama_config olmo3_7b(std::int64_t seq = 65536) { return olmo3_layers({100278, 4096, 32, 32, 32, 11008, 65536, seq, false, 4096}); }

/// q, k, v, o of one layer: q and o width × heads·d, k and v width × kv_heads·d, Qwen2's
/// q, k, v biases and Qwen3's q_norm, k_norm (d each).
constexpr std::int64_t llama_attention_parameter_count(const llama_config& g) {
  const auto q = g.heads * g.per_head(), kv = g.kv_heads * g.per_head();
  const auto norms = g.olmo2 ? q + kv : g.qk_norm || g.gemma3 ? 2 * g.per_head() : 0;  // OLMo 2's over the projections, the others' over a head
  return 2 * g.width * q + 2 * g.width * kv + (g.qkv_bias ? q + 2 * kv : 0) + norms;
}
/// Embedding, final norm and (untied) LM head.
constexpr std::int64_t llama_outside_parameter_count(const llama_config& g) {
  return (g.tied_head ? 1 : 2) * g.vocab * g.width + g.width;
}

// --- Mixture of experts (layers/moe.hpp) ------------------------------------------------------------

/// A Mixtral-style decoder: a Llama-style decoder whose MLPs are sparse MoE blocks.
struct moe_config {
  std::int64_t experts = 8;             ///< num_local_experts
  std::int64_t top_k = 2;               ///< num_experts_per_tok
  std::int64_t capacity_percent = 100;  ///< tokens per expert vs uniform routing
  /// transformers 5's MixtralExperts (3-D parameters, grouped_mm_experts_forward: its default
  /// experts_implementation) or 4.x's expert modules (layers/moe.hpp)
  moe_impl impl = moe_impl::grouped_mm;
};

/// MixtralDecoderLayer: the Llama attention, then x + moe(RMSNorm(x)).
constexpr auto mixtral_block(const llama_config& g, const moe_config& m) {
  return sequential(residual(named("input_layernorm", rms_norm()), named("self_attn", llama_attention(g))),
                    residual(named("post_attention_layernorm", rms_norm()), named("block_sparse_moe", moe(m.experts, m.top_k, g.ffn, m.capacity_percent, m.impl))));
}
constexpr auto mixtral(const llama_config& g, const moe_config& m) { return llama_stack(g, repeat(g.layers, mixtral_block(g, m))); }

/// MixtralForSequenceClassification: the MoE layers under the family's classification head.
constexpr auto mixtral_seq_cls(const llama_config& g, const moe_config& m, std::int64_t labels) {
  return llama_seq_cls_stack(g, repeat(g.layers, mixtral_block(g, m)), labels);
}

/// Mixtral-8x7B: 46,702,792,704 parameters, 12,879,925,248 active per token (top 2 of 8).
/// mistralai/Mixtral-8x7B-v0.1 config.json: hidden_size 4096, intermediate_size 14336, 32
/// layers, 32 heads, 8 key/value heads, vocab_size 32000, num_local_experts 8,
/// num_experts_per_tok 2, max_position_embeddings 32768, sliding_window null.
constexpr llama_config mixtral_8x7b(std::int64_t seq = 4096) { return {32000, 4096, 32, 32, 8, 14336, 32768, seq, false, 0}; }

/// Total and active (per token) parameters of a Mixtral-style decoder.
struct moe_counts {
  std::int64_t total = 0;
  std::int64_t active = 0;
};
constexpr moe_counts mixtral_parameter_counts(const llama_config& g, const moe_config& m) {
  const auto attn = 2 * g.width + llama_attention_parameter_count(g) + g.width * m.experts;  // norms, attention, router
  const auto expert = 3 * g.width * g.ffn;
  const auto outside = llama_outside_parameter_count(g);
  return {outside + g.layers * (attn + m.experts * expert), outside + g.layers * (attn + m.top_k * expert)};
}

// --- LoRA fine-tuning of Llama-style decoders (layers/adapters.hpp) -------------------------------

/// Llama-style decoder with every base weight frozen (stored as `l.base`) and LoRA adapters on
/// the projections in `l.targets`, as PEFT's get_peft_model builds it: embedding, norms and
/// lm_head frozen (lm_head is not part of "all-linear"). Qwen2's q/k/v biases and Gemma's
/// head_dim and GeGLU as in llama_block.
/// lora_linear(out) with `l`'s rank (when `l.targets` has `bit`), dropout, base and PEFT forward.
constexpr layer lora_linear_of(const lora_config& l, std::int64_t out_features, std::int64_t bit) {
  return lora_linear(out_features, l.targets & bit ? l.rank : 0, l.dropout_percent, l.base, l.dora, l.cast_input);
}
/// The q, k, v projections (lora_target bits) whose biases train in a decoder layer under `l`'s
/// targets: PEFT's bias="all" every bias, "lora_only" those of the adapted projections; none
/// without Qwen2's biases.
constexpr std::int64_t trained_qkv_biases(const llama_config& g, const lora_config& l) {
  constexpr std::int64_t qkv = q_proj | k_proj | v_proj;
  if (!g.qkv_bias) return 0;
  return l.bias == peft_bias::all ? qkv : l.bias == peft_bias::lora_only ? l.targets & qkv : 0;
}
/// The family's self-attention under get_peft_model: frozen projections (Phi-3's packed qkv_proj)
/// and q/k norms, LoRA on those in l.targets; its window, head layout and `local_rope` (Gemma 3's
/// sliding layers) as the layer attends.
constexpr layer lora_self_attention(const llama_config& g, const lora_config& l, bool local_rope = false) {
  const auto kind = family_qk_norm(g);
  const auto projections = g.fused_projections ? std::int64_t{qkv_proj | o_proj} : std::int64_t{q_proj | k_proj | v_proj | o_proj};
  return named("self_attn", lora_attention({.width = g.width,
                                            .heads = g.heads,
                                            .kv_heads = g.kv_heads,
                                            .rank = l.rank,
                                            .targets = l.targets & projections,
                                            .dropout_percent = l.dropout_percent,
                                            .base = l.base,
                                            .head_width = g.head_dim,
                                            .qkv_bias = g.qkv_bias,
                                            .dora = l.dora,
                                            .cast_input = l.cast_input,
                                            .trained_biases = trained_qkv_biases(g, l),
                                            .qk_norm = kind != qk_norm_kind::none ? std::optional<base_weights>(unquantized_modules(l)) : std::nullopt,
                                            .qk_kind = kind,
                                            .rotary_width = g.rotary_dim,
                                            .window = g.mask_window(),
                                            .local_rope = local_rope,
                                            .scores = family_scores(g),
                                            .training_cache = g.use_cache,
                                            .per_sample_rope_tables = g.per_sample_rope,
                                            .positional_layer_inputs = g.positional_layer_inputs,
                                            .fp32_rope_tables = g.olmo2 && !g.olmo3,
                                            .batch_attention_mask = g.attention_mask_passed,
                                            .padded_batch = g.padded_batch}));
}
/// The family's gated MLP under get_peft_model up to down_proj: act(gate_proj(x)) · up_proj(x), LoRA Linears.
constexpr auto lora_gate_up(const llama_config& g, const lora_config& l) {
  return parallel(merge_kind::multiply, sequential(named("mlp.gate_proj", lora_linear_of(l, g.ffn, gate_proj)), named("mlp.act_fn", gate_activation(g))),
                  named("mlp.up_proj", lora_linear_of(l, g.ffn, up_proj)));
}
/// ... and its down_proj.
constexpr layer lora_down_proj(const llama_config& g, const lora_config& l) { return named("mlp.down_proj", lora_linear_of(l, g.width, down_proj)); }
namespace detail {
/// LlamaDecoderLayer's order under get_peft_model, `after` on each sublayer's output (Granite's).
template <class... After>
constexpr auto llama_order_lora(const llama_config& g, const lora_config& l, const After&... after) {
  const auto stored = unquantized_modules(l);
  return sequential(residual(named("input_layernorm", frozen(family_norm(g, stored))), lora_self_attention(g, l), after...),
                    residual(named("post_attention_layernorm", frozen(family_norm(g, stored))), lora_gate_up(g, l), lora_down_proj(g, l), after...));
}
}  // namespace detail
constexpr auto llama_block_lora(const llama_config& g, const lora_config& l) {
  if (g.gemma_alternating())
    gpubudget::detail::fail("gpubudget: LoRA on Gemma 2 or 3 repeating one decoder layer: their layers alternate sliding and full attention (visit_gemma2_lora, visit_gemma3_lora)");
  if (g.olmo2 || g.granite) gpubudget::detail::layer_order_is_built_by_its_own_builder();  // olmo2_lora, granite_lora
  return detail::llama_order_lora(g, l);
}
/// GraniteDecoderLayer under get_peft_model (llama_block_lora's, each sublayer's output × residual_multiplier).
constexpr auto granite_block_lora(const llama_config& g, const lora_config& l) {
  return detail::llama_order_lora(g, l, named("residual_multiplier", scale()));
}
/// Olmo2DecoderLayer under get_peft_model (olmo2_block's order, frozen norms).
constexpr auto olmo2_block_lora(const llama_config& g, const lora_config& l) {
  const auto stored = unquantized_modules(l);
  return sequential(residual(lora_self_attention(g, l), named("post_attention_layernorm", frozen(family_norm(g, stored)))),
                    residual(lora_gate_up(g, l), lora_down_proj(g, l), named("post_feedforward_layernorm", frozen(family_norm(g, stored)))));
}
/// A LoRA fine-tune's LM head: frozen (tied: the embedding's table, counted once, as PEFT counts
/// it) or in modules_to_save. bitsandbytes quantizes the Linear layers only: the head stays in
/// 16 bit (a tied one: the embedding's).
constexpr layer lora_lm_head(const llama_config& g, const lora_config& l) {
  const auto head_base = unquantized_modules(l);
  if (l.modules_to_save & save_lm_head) return named("lm_head", saved_linear(g.vocab, head_base, g.tied_head));
  return named("lm_head", g.tied_head ? frozen_tied_linear(g.vocab, head_base) : lora_linear(g.vocab, 0, 0, head_base));
}
/// A LoRA fine-tune's classification head (llama_seq_cls_stack's): `score` of l.labels classes,
/// which PEFT's TaskType.SEQ_CLS puts in modules_to_save, then the last token's logits.
constexpr auto lora_score_head(const llama_config& g, const lora_config& l) {
  if (l.labels < 1) gpubudget::detail::invalid_layer_argument();
  if (l.modules_to_save & save_lm_head) gpubudget::detail::unknown_module_to_save();  // no lm_head to save
  return sequential(named("score", saved_linear(l.labels, unquantized_modules(l))), select_token(g.seq - 1));
}
namespace detail {
[[noreturn]] inline void layers_to_transform_past_the_last_layer() {
  gpubudget::detail::fail("gpubudget: LoRA's layers_to_transform (lora_config) names a layer past the model's last (num_hidden_layers - 1); PEFT would "
                          "adapt nothing there");
}
[[noreturn]] inline void layers_to_transform_makes_too_many_runs() {
  gpubudget::detail::fail("gpubudget: LoRA's layers_to_transform (lora_config): more than 8 runs of consecutive adapted and plain layers (4 "
                          "separate ranges of adapted layers) are not modelled");
}
[[noreturn]] inline void layers_to_transform_leaves_embed_tokens_without_an_adapter() {
  gpubudget::detail::fail("gpubudget: LoRA's layers_to_transform (lora_config) with embed_tokens among the targets: PEFT matches layers_to_transform "
                          "inside the numbered layers only (model.embed_tokens has no layer index), so it would not adapt embed_tokens: drop it");
}
[[noreturn]] inline void lora_option_is_modelled_on_the_llama_family() {
  gpubudget::detail::fail("gpubudget: LoRA's layers_to_transform, layers_pattern and bias (lora_config) are modelled on the Llama family (llama_lora, "
                          "phi3_lora, mixtral_lora), not on GPT-2, BERT or T5");
}
[[noreturn]] inline void layers_pattern_names_no_layer_list_of_this_model() {
  gpubudget::detail::fail("gpubudget: LoRA's layers_pattern (lora_config) is not this model's layer list (the Llama family's: \"layers\"), or is given "
                          "without layers_to_transform (PEFT's ValueError)");
}

/// The most runs of consecutive adapted or plain decoder layers layers_to_transform may make: a
/// fixed capacity keeps a model's record count independent of its depth and of the selection.
inline constexpr std::int64_t max_layer_runs = 8;

/// `l` as it applies to a decoder layer layers_to_transform leaves out: no adapter in it.
constexpr lora_config without_layer_adapters(lora_config l) {
  l.targets &= embed_tokens;
  return l;
}

/// The decoder layers of a LoRA fine-tune: `adapted` on the layers l.layers_to_transform selects,
/// `plain` on the others. Each run of consecutive layers of one kind is one repeat, numbered from
/// its first layer (`model.layers.4` is copy 0 of a run starting there), so depth costs no
/// records; one run (every layer adapted) is that repeat alone, several a sequence of them.
/// Room for max_layer_runs runs: the records past the span are unused (a composition around it
/// leaves them out: detail::compose).
template <std::size_t B>
constexpr model<1 + max_layer_runs * (1 + B)> decoder_layer_runs(const llama_config& g, const lora_config& l, const model<B>& adapted,
                                                                 const model<B>& plain) {
  const auto& selected = l.layers_to_transform;
  const std::string_view pattern = l.layers_pattern ? l.layers_pattern : "layers";
  if (pattern != "layers" || (l.layers_pattern && selected.all())) layers_pattern_names_no_layer_list_of_this_model();
  if (selected.last() >= g.layers) layers_to_transform_past_the_last_layer();
  if (!selected.all() && (l.targets & embed_tokens)) layers_to_transform_leaves_embed_tokens_without_an_adapter();
  const auto runs = selected.runs_in(g.layers);
  if (runs > max_layer_runs) layers_to_transform_makes_too_many_runs();
  model<1 + max_layer_runs * (1 + B)> m{};
  std::size_t at = 0;
  if (runs > 1) m.records[at++] = gpubudget::detail::composite(node_kind::sequence);
  for (std::int64_t first = 0, end = 0; first < g.layers; first = end) {
    const bool adapts = selected.adapts(first);
    for (end = first + 1; end < g.layers && selected.adapts(end) == adapts;) ++end;
    auto run = repeat(end - first, adapts ? adapted : plain);
    if (first > 0) run = numbered_from(first, run);
    run.records[1].flags.checkpoint = g.checkpoint_blocks;
    for (const auto& r : run.records) m.records[at++] = r;
  }
  if (runs > 1) m.records[0].span = static_cast<std::int32_t>(at);
  return m;
}

}  // namespace detail

/// A LoRA fine-tune around its decoder layers `blocks` (detail::decoder_layer_runs): frozen
/// embedding (× √width for Gemma; in modules_to_save: trained whole), final norm and `head`
/// (lora_lm_head or lora_score_head), then `after` (Granite's logits scaling). The model's unused
/// records (of runs layers_to_transform did not need) are at its end.
template <std::size_t N, class Head, class... After>
constexpr auto lora_stack(const llama_config& g, const lora_config& l, const model<N>& blocks, const Head& head, const After&... after) {
  if (g.seq > g.context || g.head_dim < 0) gpubudget::detail::invalid_layer_argument();
  if (g.logit_softcap && !g.gemma2) gpubudget::detail::logit_softcap_is_built_by_visit_gemma2();
  if (l.rank <= 0 || l.rank > g.width) gpubudget::detail::lora_rank_must_be_positive_and_at_most_the_layer_width();
  if (l.modules_to_save & ~std::int64_t{save_lm_head | save_embed_tokens}) gpubudget::detail::unknown_module_to_save();
  if (l.kbit_prepared && !is_quantized(l.base)) gpubudget::detail::kbit_preparation_needs_a_quantized_base();
  const auto stored = unquantized_modules(l);
  if ((l.modules_to_save & save_embed_tokens) && (l.targets & embed_tokens)) gpubudget::detail::embed_tokens_both_adapted_and_saved();
  const layer embed = l.modules_to_save & save_embed_tokens ? saved_embedding(g.vocab, g.width, stored)
                      : l.targets & embed_tokens            ? lora_embedding(g.vocab, g.width, l.rank, stored, l.dora)
                                                            : frozen_embedding(g.vocab, g.width, stored, l.kbit_prepared);
  const auto input = tokens(g.seq);
  const auto scale = family_embedding_scale(g);
  return sequential(input, named("model.embed_tokens", embed), scale, named("model.layers", blocks), named("model.norm", frozen(family_norm(g, stored))), head, after...);
}
/// The decoder layers of llama_lora.
constexpr auto llama_lora_blocks(const llama_config& g, const lora_config& l) {
  if (l.targets <= 0 || (l.targets & ~std::int64_t{all_linear | embed_tokens}) != 0) gpubudget::detail::unknown_lora_target_module();
  if (g.fused_projections) gpubudget::detail::lora_needs_a_plain_llama_config();  // Phi-3's module names: phi3_lora
  return detail::decoder_layer_runs(g, l, llama_block_lora(g, l), llama_block_lora(g, detail::without_layer_adapters(l)));
}
/// get_peft_model of a Llama-family causal LM (LlamaForCausalLM and kin).
constexpr auto llama_lora(const llama_config& g, const lora_config& l) { return lora_stack(g, l, llama_lora_blocks(g, l), lora_lm_head(g, l)); }
/// get_peft_model(task_type=SEQ_CLS) of LlamaForSequenceClassification (and kin): l.labels classes.
constexpr auto llama_lora_seq_cls(const llama_config& g, const lora_config& l) {
  return lora_stack(g, l, llama_lora_blocks(g, l), lora_score_head(g, l));
}

/// get_peft_model of Olmo2ForCausalLM.
constexpr auto olmo2_lora(const llama_config& g, const lora_config& l) {
  if (!g.olmo2) gpubudget::detail::invalid_layer_argument();
  if (g.olmo3) gpubudget::detail::olmo3_layers_are_built_by_visit_olmo3();
  if (l.targets <= 0 || (l.targets & ~std::int64_t{all_linear | embed_tokens}) != 0) gpubudget::detail::unknown_lora_target_module();
  return lora_stack(g, l, detail::decoder_layer_runs(g, l, olmo2_block_lora(g, l), olmo2_block_lora(g, detail::without_layer_adapters(l))), lora_lm_head(g, l));
}

/// get_peft_model of GraniteForCausalLM: the logits ÷ logits_scaling after the head.
constexpr auto granite_lora(const llama_config& g, const lora_config& l) {
  if (!g.granite) gpubudget::detail::invalid_layer_argument();
  if (l.targets <= 0 || (l.targets & ~std::int64_t{all_linear | embed_tokens}) != 0) gpubudget::detail::unknown_lora_target_module();
  const auto blocks = detail::decoder_layer_runs(g, l, granite_block_lora(g, l), granite_block_lora(g, detail::without_layer_adapters(l)));
  return lora_stack(g, l, blocks, lora_lm_head(g, l), named("logits_scaling", scale()));
}

/// Gemma3DecoderLayer (and Gemma2DecoderLayer) under get_peft_model: gemma_block with its four norms
/// and the q/k norms frozen, LoRA on the projections in l.targets; a sliding layer's window (and
/// Gemma 3's local RoPE) as there.
constexpr auto gemma_block_lora(const llama_config& g, const lora_config& l, bool sliding) {
  const auto norm = [&](const char* name) { return named(name, frozen(family_norm(g, unquantized_modules(l)))); };
  return sequential(residual(norm("input_layernorm"), lora_self_attention(sliding ? g : full_attention(g), l, sliding && g.gemma3),
                             norm("post_attention_layernorm")),
                    residual(norm("pre_feedforward_layernorm"), lora_gate_up(g, l), lora_down_proj(g, l), norm("post_feedforward_layernorm")));
}
namespace detail {
[[noreturn]] inline void layers_to_transform_on_alternating_layers() {
  gpubudget::detail::fail("gpubudget: LoRA's layers_to_transform (lora_config) on Gemma 2, Gemma 3 or OLMo 3 is not modelled (their layers alternate sliding and full "
                          "attention): adapt every layer");
}
}  // namespace detail
namespace detail {
/// The checks visit_gemma2_lora, visit_gemma3_lora and visit_olmo3_lora share: targets the family
/// has, every layer adapted.
constexpr void check_alternating_lora(const lora_config& l) {
  if (l.targets <= 0 || (l.targets & ~std::int64_t{all_linear | embed_tokens}) != 0) gpubudget::detail::unknown_lora_target_module();
  if (!l.layers_to_transform.all() || l.layers_pattern) layers_to_transform_on_alternating_layers();
}
}  // namespace detail
/// get_peft_model of Gemma3ForCausalLM as `f` takes it (visit_gemma3's layers, gemma_block_lora
/// each, around lora_stack); every layer adapted.
template <class F>
constexpr decltype(auto) visit_gemma3_lora(const llama_config& g, const lora_config& l, F&& f) {
  detail::check_alternating_lora(l);
  return visit_gemma3_layers(g, [&](bool sliding) { return gemma_block_lora(g, l, sliding); },
                             [&](const auto& layers) { return f(lora_stack(g, l, layers, lora_lm_head(g, l))); });
}
/// get_peft_model of Gemma2ForCausalLM as `f` takes it (visit_gemma2's layers, gemma_block_lora
/// each, around lora_stack, the logits soft-capped); every layer adapted.
template <class F>
constexpr decltype(auto) visit_gemma2_lora(const llama_config& g, const lora_config& l, F&& f) {
  detail::check_alternating_lora(l);
  return visit_gemma2_layers(g, [&](bool sliding) { return gemma_block_lora(g, l, sliding); },
                             [&](const auto& layers) {
                               return f(lora_stack(g, l, layers, lora_lm_head(g, l), logits_by_cap(g), gemma2_logit_softcap(g), logits_by_cap(g)));
                             });
}
/// Olmo3DecoderLayer under get_peft_model: olmo2_block_lora with the window on a sliding layer
/// only (olmo3_block's rule).
constexpr auto olmo3_block_lora(const llama_config& g, const lora_config& l, bool sliding) { return olmo2_block_lora(sliding ? g : full_attention(g), l); }
/// get_peft_model of Olmo3ForCausalLM as `f` takes it (visit_olmo3's layers, olmo2_block_lora on
/// each with its window, around lora_stack); every layer adapted.
template <class F>
constexpr decltype(auto) visit_olmo3_lora(const llama_config& g, const lora_config& l, F&& f) {
  detail::check_alternating_lora(l);
  return visit_olmo3_layers(g, [&](bool sliding) { return olmo3_block_lora(g, l, sliding); },
                            [&](const auto& layers) { return f(lora_stack(g, l, layers, lora_lm_head(g, l))); });
}

namespace detail {
/// The targets of `l` on a family whose modules are `modules` (a lora_target mask; PEFT's
/// "all-linear" is all of them), checked with the rest of `l` for the families whose frozen base
/// is modelled in the precision's parameter type (GPT-2, BERT, T5): a rank up to `width`, no
/// other base type, nothing saved whole, no kbit preparation.
constexpr std::int64_t family_lora_targets(const lora_config& l, std::int64_t modules, std::int64_t width) {
  if (l.rank <= 0 || l.rank > width) gpubudget::detail::lora_rank_must_be_positive_and_at_most_the_layer_width();
  if (l.base != base_weights::same || l.modules_to_save != 0 || l.kbit_prepared) gpubudget::detail::lora_on_this_family_keeps_the_base_in_the_parameter_type();
  if (!l.layers_to_transform.all() || l.layers_pattern || l.bias != peft_bias::none) lora_option_is_modelled_on_the_llama_family();
  const auto t = l.targets == all_linear ? modules : l.targets;
  if (t <= 0 || (t & ~modules) != 0) gpubudget::detail::unknown_lora_target_module();
  return t;
}
}  // namespace detail

/// GPT-2's LoRA targets in `l`, checked (detail::family_lora_targets).
constexpr std::int64_t gpt_lora_targets(const gpt_config& g, const lora_config& l) { return detail::family_lora_targets(l, gpt2_lora_modules, g.width); }
/// GPT2Block under PEFT (get_peft_model on transformers' GPT2LMHeadModel): frozen LayerNorms;
/// the attention's c_attn (one adapter over q, k and v) and c_proj, and the MLP's c_fc and c_proj,
/// each a frozen Conv1D with its bias and an adapter where the targets name it (PEFT's "c_proj"
/// names both c_proj modules). `t`: gpt_lora_targets.
constexpr auto gpt_block_lora(const gpt_config& g, const lora_config& l, std::int64_t t) {
  const auto rank_if = [&](std::int64_t bit) { return t & bit ? l.rank : 0; };
  const attention_adapters adapters{l.rank, (t & c_attn ? std::int64_t{adapt_qkv} : 0) | (t & c_proj ? std::int64_t{adapt_out} : 0), l.dropout_percent, base_weights::same,
                                    l.dora, l.cast_input};
  return sequential(
      residual(named("ln_1", frozen(layer_norm())),
               named("attn", gpt_attention(g, adapters)),
               named("attn.resid_dropout", dropout(g.dropout_percent))),
      residual(named("ln_2", frozen(layer_norm())), named("mlp.c_fc", lora_linear(4 * g.width, rank_if(c_fc), l.dropout_percent, base_weights::same, l.dora, l.cast_input, true)),
               named("mlp.act", g.gelu_new ? gelu_new() : gelu()), named("mlp.c_proj", lora_linear(g.width, rank_if(c_proj), l.dropout_percent, base_weights::same, l.dora, l.cast_input, true)),
               named("mlp.dropout", dropout(g.dropout_percent))));
}
/// get_peft_model of transformers' GPT2LMHeadModel (PEFT's default target for GPT-2: c_attn):
/// every base weight frozen in the precision's parameter type (the tied LM head the frozen
/// embedding's), the adapters trainable. `l.base` must be `same` and nothing saved whole:
/// bitsandbytes leaves GPT-2's Conv1D modules unquantized.
constexpr auto gpt_lora(const gpt_config& g, const lora_config& l) {
  if (l.labels != 0) gpubudget::detail::lora_on_this_family_keeps_the_base_in_the_parameter_type();  // no classifier here
  auto blocks = named("transformer.h", repeat(g.layers, gpt_block_lora(g, l, gpt_lora_targets(g, l))));
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;
  return sequential(tokens(g.seq), named("transformer.wte", frozen_embedding(g.vocab, g.width)), named("transformer.wpe", frozen(learned_positions(g.context))),
                    named("transformer.drop", dropout(g.dropout_percent)), blocks, named("transformer.ln_f", frozen(layer_norm())),
                    named("lm_head", frozen_tied_linear(g.vocab)));
}

/// BERT's LoRA targets in `l`, checked (detail::family_lora_targets).
constexpr std::int64_t bert_lora_targets(const bert_config& b, const lora_config& l) { return detail::family_lora_targets(l, bert_lora_modules, b.width); }
/// BertLayer under PEFT: the attention's query, key, value and output.dense, intermediate.dense
/// and output.dense with adapters where the targets name them (PEFT's "dense" names all three
/// dense Linears, and the pooler's), every base weight and LayerNorm frozen. `t`: bert_lora_targets.
constexpr auto bert_layer_lora(const bert_config& b, const lora_config& l, std::int64_t t) {
  const auto dense_rank = t & bert_dense ? l.rank : 0;
  const auto part = [&](std::int64_t bit, attention_adapter_parts p) { return t & bit ? std::int64_t{p} : 0; };
  const attention_adapters adapters{l.rank, part(bert_query, adapt_q) | part(bert_key, adapt_k) | part(bert_value, adapt_v) | part(bert_dense, adapt_out),
                                    l.dropout_percent, base_weights::same, l.dora, l.cast_input};
  return sequential(residual(named("attention", bert_attention(b, adapters)),
                             named("attention.output.dropout", dropout(b.dropout_percent))),
                    named("attention.output.LayerNorm", frozen(layer_norm())),
                    residual(named("intermediate.dense", lora_linear(b.ffn, dense_rank, l.dropout_percent, base_weights::same, l.dora, l.cast_input, true)),
                             named("intermediate.intermediate_act_fn", gelu()),
                             named("output.dense", lora_linear(b.width, dense_rank, l.dropout_percent, base_weights::same, l.dora, l.cast_input, true)),
                             named("output.dropout", dropout(b.dropout_percent))),
                    named("output.LayerNorm", frozen(layer_norm())));
}
/// get_peft_model(task_type=SEQ_CLS) of transformers' BertForSequenceClassification (PEFT's default
/// targets for BERT: query, value): a frozen BertModel with adapters, the pooler's dense adapted
/// when "dense" is a target, and `classifier` (l.labels classes, with its bias) in
/// modules_to_save: a trainable copy beside the frozen original. `l.base` must be `same`.
constexpr auto bert_lora_seq_cls(const bert_config& b, const lora_config& l, std::int64_t classifier_dropout_percent) {
  if (l.labels < 1) gpubudget::detail::invalid_layer_argument();
  const auto t = bert_lora_targets(b, l);
  const auto pooler = sequential(select_token(0), named("dense", lora_linear(b.width, t & bert_dense ? l.rank : 0, l.dropout_percent, base_weights::same, l.dora,
                                                                              l.cast_input, true)),
                                 named("activation", tanh()));
  const auto encoder = sequential(tokens(b.seq), named("embeddings.word_embeddings", frozen_embedding(b.vocab, b.width)),
                                  named("embeddings", frozen(bert_embeddings(b.type_vocab, b.max_positions))), named("embeddings.LayerNorm", frozen(layer_norm())),
                                  named("embeddings.dropout", dropout(b.dropout_percent)), named("encoder.layer", repeat(b.layers, bert_layer_lora(b, l, t))),
                                  named("pooler", pooler));
  return sequential(named("bert", encoder), named("dropout", dropout(classifier_dropout_percent)),
                    named("classifier", saved_linear(l.labels, base_weights::same, false, true)));
}

/// T5's LoRA targets in `l`, checked (detail::family_lora_targets).
constexpr std::int64_t t5_lora_targets(const t5_config& t, const lora_config& l) { return detail::family_lora_targets(l, t5_lora_modules, t.width); }

namespace detail {
/// PEFT's target_modules list ("q,v", ...) of the T5 lora_target bits in `targets`.
struct t5_target_names {
  char text[32] = {};
  constexpr explicit t5_target_names(std::int64_t targets) {
    constexpr std::int64_t bits[] = {t5_q, t5_k, t5_v, t5_o, t5_wi, t5_wo};
    constexpr const char* names[] = {"q", "k", "v", "o", "wi", "wo"};
    std::size_t n = 0;
    for (std::size_t i = 0; i < 6; ++i) {
      if ((targets & bits[i]) == 0) continue;
      if (n > 0) text[n++] = ',';
      for (const char* c = names[i]; *c != '\0'; ++c) text[n++] = *c;
    }
  }
};
}  // namespace detail

/// get_peft_model(task_type=SEQ_2_SEQ_LM) of T5ForConditionalGeneration: get_peft_model(t5(t),
/// "q,v", l) with the module names of `l.targets` (PEFT's default for T5: q, v). The attention
/// ops' projections (self- and cross-attention, both stacks) take attention_adapters,
/// DenseReluDense.wi and .wo become lora_linear, everything else is frozen (the tied head reads
/// the frozen shared table). `l.base` must be `same`.
constexpr auto t5_lora(const t5_config& t, const lora_config& l) {
  if (l.labels != 0) gpubudget::detail::lora_on_this_family_keeps_the_base_in_the_parameter_type();  // no classifier here
  const detail::t5_target_names names(t5_lora_targets(t, l));
  return get_peft_model(t5(t), names.text, lora_config{.rank = l.rank, .dropout_percent = l.dropout_percent, .dora = l.dora, .cast_input = l.cast_input});
}

/// Phi3DecoderLayer under PEFT: adapters on the fused qkv_proj (one adapter for q, k and v),
/// o_proj, the fused gate_up_proj and down_proj (`l.targets` of fused_all_linear).
constexpr auto phi3_block_lora(const llama_config& g, const lora_config& l) {
  return sequential(
      residual(named("input_layernorm", frozen(rms_norm(unquantized_modules(l)))), lora_self_attention(g, l)),
      residual(named("post_attention_layernorm", frozen(rms_norm(unquantized_modules(l)))), named("mlp.gate_up_proj", lora_linear_of(l, 2 * g.ffn, gate_up_proj)),
               named("mlp.activation_fn", silu_of_halves()), named("mlp.down_proj", lora_linear_of(l, g.width, down_proj))));
}
/// Phi-3 (microsoft/Phi-3-mini-4k-instruct's modules) with LoRA: targets among qkv_proj,
/// o_proj, gate_up_proj, down_proj (fused_all_linear is PEFT's "all-linear" there).
constexpr auto phi3_lora_blocks(const llama_config& g, const lora_config& l) {
  if (l.targets <= 0 || (l.targets & ~std::int64_t{fused_all_linear | embed_tokens}) != 0) gpubudget::detail::unknown_lora_target_module();
  return detail::decoder_layer_runs(g, l, phi3_block_lora(g, l), phi3_block_lora(g, detail::without_layer_adapters(l)));
}
constexpr auto phi3_lora(const llama_config& g, const lora_config& l) { return lora_stack(g, l, phi3_lora_blocks(g, l), lora_lm_head(g, l)); }
constexpr auto phi3_lora_seq_cls(const llama_config& g, const lora_config& l) {
  return lora_stack(g, l, phi3_lora_blocks(g, l), lora_score_head(g, l));
}

namespace detail {
[[noreturn]] inline void lora_on_transformers5_mixtral_experts_is_not_modelled() {
  gpubudget::detail::fail("gpubudget: LoRA on Mixtral's w1, w2, w3 or gate: transformers 5's Mixtral has no such modules (MixtralExperts holds 3-D "
                          "gate_up_proj and down_proj parameters, MixtralTopKRouter a weight, which PEFT adapts through target_parameters: "
                          "not modelled); adapt q_proj, k_proj, v_proj, o_proj, or count transformers 4.x's expert modules (moe_impl::expert_modules)");
}
}  // namespace detail
/// PEFT's target_modules on Mixtral `m` as the modules it adapts. "all-linear" is every nn.Linear
/// but the head (PEFT's _maybe_include_all_linear_layers): in transformers 5 the attention
/// projections alone (MixtralExperts and MixtralTopKRouter hold nn.Parameters, not Linears), in
/// 4.x (moe_impl::expert_modules) those and every expert's w1, w2, w3 and the router's gate.
/// Mixtral has no dense MLP (gate_proj, up_proj, down_proj) nor fused projections.
constexpr lora_config mixtral_lora_targets(const moe_config& m, lora_config l) {
  constexpr std::int64_t attention = q_proj | k_proj | v_proj | o_proj, experts = w1 | w2 | w3 | router_gate;
  if ((l.targets & all_linear) == all_linear) l.targets = (l.targets & ~std::int64_t{all_linear}) | attention | (m.impl == moe_impl::grouped_mm ? 0 : experts);
  if ((l.targets & ~std::int64_t{attention | experts | embed_tokens}) != 0) gpubudget::detail::unknown_lora_target_module();
  if (m.impl == moe_impl::grouped_mm && (l.targets & experts) != 0) detail::lora_on_transformers5_mixtral_experts_is_not_modelled();
  return l;
}

/// MixtralDecoderLayer under PEFT with adapters on attention (q_proj, k_proj, v_proj, o_proj);
/// the experts and the router stay frozen in the precision's parameter type.
constexpr auto mixtral_block_lora(const llama_config& g, const moe_config& m, const lora_config& l) {
  return sequential(residual(named("input_layernorm", frozen(rms_norm())), lora_self_attention(g, l)),
                    residual(named("post_attention_layernorm", frozen(rms_norm())), named("block_sparse_moe", frozen(moe(m.experts, m.top_k, g.ffn, m.capacity_percent, m.impl)))));
}
/// Mixtral with LoRA on its attention (`l` resolved by mixtral_lora_targets). Adapters on 4.x's
/// experts (w1, w2, w3) or router (gate) are counted (mixtral_lora_counts) but not simulated:
/// unknown_lora_target_module here; so is a base stored other than in the precision's parameter
/// type (the frozen experts are parameters of that type).
constexpr auto mixtral_lora_blocks(const llama_config& g, const moe_config& m, const lora_config& l) {
  if (l.targets <= 0 || (l.targets & ~std::int64_t{q_proj | k_proj | v_proj | o_proj | embed_tokens}) != 0) gpubudget::detail::unknown_lora_target_module();
  if (l.base != base_weights::same) gpubudget::detail::lora_needs_a_plain_llama_config();
  return detail::decoder_layer_runs(g, l, mixtral_block_lora(g, m, l), mixtral_block_lora(g, m, detail::without_layer_adapters(l)));
}
constexpr auto mixtral_lora(const llama_config& g, const moe_config& m, const lora_config& l) {
  const auto t = mixtral_lora_targets(m, l);
  return lora_stack(g, t, mixtral_lora_blocks(g, m, t), lora_lm_head(g, t));
}
constexpr auto mixtral_lora_seq_cls(const llama_config& g, const moe_config& m, const lora_config& l) {
  const auto t = mixtral_lora_targets(m, l);
  return lora_stack(g, t, mixtral_lora_blocks(g, m, t), lora_score_head(g, t));
}

/// Parameter counts as PEFT's print_trainable_parameters() reports them.
struct parameter_counts {
  std::int64_t trainable = 0;
  std::int64_t all = 0;
};

/// PEFT's counts of gpt_lora(g, l) (print_trainable_parameters): GPT-2's parameters (wte, wpe, per
/// block 12·D² + 13·D, ln_f; 124,439,808 for gpt2) plus the adapters, lora_A [r, in] and lora_B
/// [out, r] on each targeted Conv1D (c_attn D -> 3D, attn.c_proj D -> D, c_fc D -> 4D, mlp.c_proj
/// 4D -> D), and DoRA's magnitude [out] on each. gpt2 with r = 8 on c_attn: 294,912 trainable of
/// 124,734,720.
constexpr parameter_counts gpt_lora_counts(const gpt_config& g, const lora_config& l) {
  const auto t = gpt_lora_targets(g, l), D = g.width, r = l.rank;
  const auto adapter = [&](std::int64_t bit, std::int64_t in, std::int64_t out) { return t & bit ? r * (in + out) + (l.dora ? out : 0) : 0; };
  const auto per_block = adapter(c_attn, D, 3 * D) + adapter(c_proj, D, D) + adapter(c_fc, D, 4 * D) + adapter(c_proj, 4 * D, D);
  const auto base = g.vocab * D + g.context * D + g.layers * (12 * D * D + 13 * D) + 2 * D;
  return {g.layers * per_block, base + g.layers * per_block};
}

/// PEFT's counts of bert_lora_seq_cls(b, l, ...): BERT's parameters with the pooler (109,482,240
/// for bert-base-uncased), the classifier twice (PEFT's ModulesToSaveWrapper keeps the original
/// and the trained copy: 2 · (D · labels + labels)), and the adapters r·(in + out) on each
/// targeted Linear (query, key, value D -> D; "dense": attention.output.dense D -> D,
/// intermediate.dense D -> F, output.dense F -> D, and once pooler.dense D -> D), DoRA's [out].
constexpr parameter_counts bert_lora_counts(const bert_config& b, const lora_config& l) {
  const auto t = bert_lora_targets(b, l), D = b.width, F = b.ffn, r = l.rank;
  const auto adapter = [&](std::int64_t bit, std::int64_t in, std::int64_t out) { return t & bit ? r * (in + out) + (l.dora ? out : 0) : 0; };
  const auto per_layer = adapter(bert_query, D, D) + adapter(bert_key, D, D) + adapter(bert_value, D, D) + adapter(bert_dense, D, D) +
                         adapter(bert_dense, D, F) + adapter(bert_dense, F, D);
  const auto adapters = b.layers * per_layer + adapter(bert_dense, D, D);
  const auto classifier = D * l.labels + l.labels;
  const auto base = (b.vocab + b.max_positions + b.type_vocab) * D + 2 * D + b.layers * (4 * D * D + 4 * D + 2 * D * F + F + D + 4 * D) + D * D + D;
  return {adapters + classifier, base + adapters + 2 * classifier};
}

/// PEFT's counts of t5_lora(t, l): T5's parameters (t5_parameter_count) and r·(in + out) per
/// targeted module (and DoRA's [out]): q, k, v D -> H·d_kv and o H·d_kv -> D in every attention
/// (layers + 2 · decoder_layers of them), wi D -> F and wo F -> D in every feed-forward
/// (layers + decoder_layers). t5-small, r = 8 on q, v: 18 · 2 · 8 · (512 + 512) = 294,912.
constexpr parameter_counts t5_lora_counts(const t5_config& t, const lora_config& l) {
  const auto targets = t5_lora_targets(t, l), D = t.width, inner = t.heads * t.head_width, F = t.ffn, r = l.rank;
  const auto adapter = [&](std::int64_t bit, std::int64_t in, std::int64_t out) { return targets & bit ? r * (in + out) + (l.dora ? out : 0) : 0; };
  const auto attention = adapter(t5_q, D, inner) + adapter(t5_k, D, inner) + adapter(t5_v, D, inner) + adapter(t5_o, inner, D);
  const auto feed_forward = adapter(t5_wi, D, F) + adapter(t5_wo, F, D);
  const auto adapters = (t.layers + 2 * t.decoder_layers) * attention + (t.layers + t.decoder_layers) * feed_forward;
  return {adapters, t5_parameter_count(t) + adapters};
}

/// All parameters of a Llama-style decoder: the closed form of models::llama.
constexpr std::int64_t llama_parameter_count(const llama_config& g) {
  const auto block = (g.gemma_alternating() ? 4 : 2) * g.width + llama_attention_parameter_count(g) + 3 * g.width * g.ffn;  // Gemma 3: four norms
  return llama_outside_parameter_count(g) + g.layers * block;
}

/// PEFT's adapter parameters in one decoder layer: r·(in + out) for every targeted Linear (and
/// DoRA's magnitude, out), by lora_target bit; `experts` copies of w1, w2, w3 (Mixtral), a
/// router of `experts` outputs.
constexpr std::int64_t lora_parameters_per_layer(const llama_config& g, const lora_config& l, std::int64_t experts) {
  const auto kv = g.kv_heads * g.per_head(), q = g.heads * g.per_head(), D = g.width, F = g.ffn, E = experts;
  const std::int64_t in_out_copies[13][3] = {{D, q, 1},          {D, kv, 1},    {D, kv, 1}, {q, D, 1}, {D, F, 1}, {D, F, 1}, {F, D, 1},
                                             {D, q + 2 * kv, 1}, {D, 2 * F, 1}, {D, F, E},  {F, D, E}, {D, F, E}, {D, E, 1}};
  std::int64_t per_layer = 0;
  for (std::size_t bit = 0; bit < 13; ++bit) {
    const auto& [in, out, copies] = in_out_copies[bit];
    if (l.targets & (std::int64_t{1} << bit)) per_layer += checked_mul(l.rank * (in + out) + (l.dora ? out : 0), copies);
  }
  return per_layer;
}

/// What modules_to_save and a classification head change in PEFT's counts of a model with
/// `base_all` parameters: each copy trains and is counted beside its original; a score head
/// replaces lm_head (an untied one's table goes).
constexpr parameter_counts with_saved_modules(const llama_config& g, const lora_config& l, std::int64_t adapters, std::int64_t base_all) {
  const auto table = checked_mul(g.vocab, g.width), score = checked_mul(l.labels, g.width);
  const auto copies = (l.modules_to_save & save_lm_head ? table : 0) + (l.modules_to_save & save_embed_tokens ? table : 0) + score;
  const auto base = l.labels > 0 ? base_all - (g.tied_head ? 0 : table) + score : base_all;
  // lora_embedding_A [r, vocab], B [width, r]; DoRA's magnitude [width]
  const auto embedding_adapter = l.targets & embed_tokens ? l.rank * (g.vocab + g.width) + (l.dora ? g.width : 0) : 0;
  return {adapters + copies + embedding_adapter, base + adapters + copies + embedding_adapter};
}
/// PEFT's counts with the biases l.bias trains added to the trainable ones (they are counted
/// among all parameters already): Qwen2's q (heads · d) and k, v (kv_heads · d) biases, of every
/// layer ("all") or of the adapted projections in the adapted layers ("lora_only").
constexpr parameter_counts with_trained_biases(const llama_config& g, const lora_config& l, parameter_counts c) {
  const std::int64_t widths[] = {g.heads * g.per_head(), g.kv_heads * g.per_head(), g.kv_heads * g.per_head()};
  const std::int64_t bits[] = {q_proj, k_proj, v_proj};
  const auto per_layer = [&](std::int64_t trained) {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < 3; ++i) n += trained & bits[i] ? widths[i] : 0;
    return n;
  };
  const auto adapted = l.layers_to_transform.adapted_of(g.layers);
  c.trainable += adapted * per_layer(trained_qkv_biases(g, l)) + (g.layers - adapted) * per_layer(trained_qkv_biases(g, detail::without_layer_adapters(l)));
  return c;
}
/// PEFT's counts for LoRA `l` on `g` (Llama names, or Phi-3's qkv_proj / gate_up_proj).
constexpr parameter_counts lora_counts(const llama_config& g, const lora_config& l) {
  auto dense = l;
  dense.targets &= ~std::int64_t{w1 | w2 | w3 | router_gate};  // no experts in a dense model
  const auto trainable = checked_mul(l.layers_to_transform.adapted_of(g.layers), lora_parameters_per_layer(g, dense, 0));
  return with_trained_biases(g, l, with_saved_modules(g, l, trainable, llama_parameter_count(g)));
}
/// PEFT's counts for LoRA `l` on Mixtral `g`, `m`: attention adapters, and on 4.x's expert modules
/// (moe_impl::expert_modules) those of the experts (w1, w2, w3 of every expert) and router (gate);
/// "all-linear" as mixtral_lora_targets resolves it.
constexpr parameter_counts mixtral_lora_counts(const llama_config& g, const moe_config& m, const lora_config& lora) {
  const auto l = mixtral_lora_targets(m, lora);
  const auto trainable = checked_mul(l.layers_to_transform.adapted_of(g.layers), lora_parameters_per_layer(g, l, m.experts));
  return with_trained_biases(g, l, with_saved_modules(g, l, trainable, mixtral_parameter_counts(g, m).total));
}

}  // namespace gpubudget::models
