// gpubudget/models/transformers.hpp — Hugging Face transformer families: BERT (post-norm encoder
// with pooler), GPT-2 (models::gpt, re-exported here), and Llama-style decoders (Llama 2,
// Llama 3, Mistral): RMSNorm, grouped-query flash attention with rotary embeddings, SwiGLU MLP,
// untied LM head. Sizes are config structs; sequence length is a budget parameter.
#pragma once
#include <cstdint>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/gpt.hpp>

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
};

/// BertLayer: post-norm. LN(x + dropout(attn(x))) with separate q, k, v projections (modeled as
/// a q and a packed kv Linear: the same parameters and activations) and materialized scores,
/// then LN(h + dropout(Linear(GELU(Linear(h))))).
/// Module names are transformers' BertLayer's; the attention op holds attention.self and
/// attention.output.dense, so `attention` selects them together.
constexpr auto bert_layer(const bert_config& b) {
  return sequential(residual(named("attention", attention(b.width, heads(b.heads), attention_impl::split_qkv,
                                                          attention_dropout(b.attention_dropout_percent))),
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
/// bert-base-uncased: 109,482,240 parameters with the pooler.
constexpr bert_config bert_base(std::int64_t seq = 512) { return {30522, 512, 2, 768, 12, 12, 3072, 10, 10, seq, true}; }
/// bert-large-uncased.
constexpr bert_config bert_large(std::int64_t seq = 512) { return {30522, 512, 2, 1024, 24, 16, 4096, 10, 10, seq, true}; }

// --- GPT-2 (models::gpt, gpt.hpp) ----------------------------------------------------------------
// gpt2_small 124,439,808 · gpt2_medium 354,823,168 · gpt2_large 774,030,080 · gpt2_xl 1,557,611,200
// (tied head, 1024 learned positions).

// --- Llama-style decoders -------------------------------------------------------------------------

/// Sizes of a Llama-style decoder (transformers LlamaForCausalLM / MistralForCausalLM).
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
  std::int64_t sliding_window = 0; ///< tokens each query attends to (0: all); the KV cache holds at most this many
};

/// LlamaDecoderLayer: x + o(flash(RoPE(q(RMSNorm(x))), RoPE(k(..)), v(..))), then
/// x + down(silu(gate(RMSNorm(h))) * up(RMSNorm(h))); no biases. Module names are transformers'
/// (input_layernorm, self_attn, post_attention_layernorm, mlp.gate_proj, ...); the attention is
/// one op, so its q/k/v/o projections are selected together as `self_attn`.
constexpr auto llama_block(const llama_config& g) {
  return sequential(residual(named("input_layernorm", rms_norm()),
                             named("self_attn", attention(g.width, heads(g.heads), attention_impl::flash, kv_heads(g.kv_heads), no_bias, rotary))),
                    residual(named("post_attention_layernorm", rms_norm()), named("mlp", swiglu(g.ffn, g.width))));
}

/// A Llama-style causal LM: token embedding, `layers` decoder layers, final RMSNorm, untied
/// LM head; the logits [seq, vocab] are the output.
constexpr auto llama(const llama_config& g) {
  if (g.seq > g.context) gpubudget::detail::invalid_layer_argument();
  auto blocks = named("model.layers", repeat(g.layers, llama_block(g)));
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;  // the block under the repeat
  return sequential(tokens(g.seq), named("model.embed_tokens", embedding(g.vocab, g.width)), blocks, named("model.norm", rms_norm()),
                    named("lm_head", linear(g.vocab, no_bias)));
}

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
/// gate_up_proj hold the same weights as separate projections (same parameters and activations).
constexpr llama_config phi3_mini(std::int64_t seq = 4096) { return {32064, 3072, 32, 32, 32, 8192, 4096, seq, false, 0}; }

// --- Mixture of experts (layers/moe.hpp) ------------------------------------------------------------

/// A Mixtral-style decoder: a Llama-style decoder whose MLPs are sparse MoE blocks.
struct moe_config {
  std::int64_t experts = 8;             ///< num_local_experts
  std::int64_t top_k = 2;               ///< num_experts_per_tok
  std::int64_t capacity_percent = 100;  ///< tokens per expert vs uniform routing
};

/// MixtralDecoderLayer: the Llama attention, then x + moe(RMSNorm(x)).
constexpr auto mixtral_block(const llama_config& g, const moe_config& m) {
  return sequential(residual(named("input_layernorm", rms_norm()),
                             named("self_attn", attention(g.width, heads(g.heads), attention_impl::flash, kv_heads(g.kv_heads), no_bias, rotary))),
                    residual(named("post_attention_layernorm", rms_norm()), named("block_sparse_moe", moe(m.experts, m.top_k, g.ffn, m.capacity_percent))));
}
constexpr auto mixtral(const llama_config& g, const moe_config& m) {
  if (g.seq > g.context) gpubudget::detail::invalid_layer_argument();
  auto blocks = named("model.layers", repeat(g.layers, mixtral_block(g, m)));
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;
  return sequential(tokens(g.seq), named("model.embed_tokens", embedding(g.vocab, g.width)), blocks, named("model.norm", rms_norm()),
                    named("lm_head", linear(g.vocab, no_bias)));
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
  const auto kv = g.kv_heads * (g.width / g.heads);
  const auto attn = 2 * g.width + 2 * g.width * g.width + 2 * g.width * kv + g.width * m.experts;  // norms, q/o, k/v, router
  const auto expert = 3 * g.width * g.ffn;
  const auto outside = 2 * g.vocab * g.width + g.width;
  return {outside + g.layers * (attn + m.experts * expert), outside + g.layers * (attn + m.top_k * expert)};
}

// --- LoRA fine-tuning of Llama-style decoders (layers/adapters.hpp) -------------------------------

/// A PEFT LoraConfig as far as memory is concerned (lora_alpha only scales: no bytes).
struct lora_config {
  std::int64_t rank = 8;
  std::int64_t targets = q_proj | v_proj;  ///< lora_target bits; parse_lora_targets("q_proj,v_proj")
  std::int64_t dropout_percent = 0;        ///< lora_dropout · 100 (PEFT's default 0.0)
  base_weights base = base_weights::same;  ///< storage of the frozen base model (nf4_dq: QLoRA)
};

/// Llama-style decoder with every base weight frozen (stored as `l.base`) and LoRA adapters on
/// the projections in `l.targets`, as PEFT's get_peft_model builds it: embedding, norms and
/// lm_head frozen (lm_head is not part of "all-linear").
constexpr auto llama_block_lora(const llama_config& g, const lora_config& l) {
  auto r = [&](std::int64_t bit) { return l.targets & bit ? l.rank : 0; };
  return sequential(
      residual(named("input_layernorm", frozen(rms_norm())),
               named("self_attn", lora_attention(g.width, g.heads, g.kv_heads, l.rank, l.targets & (q_proj | k_proj | v_proj | o_proj),
                                                 l.dropout_percent, l.base))),
      residual(named("post_attention_layernorm", frozen(rms_norm())),
               parallel(merge_kind::multiply,
                        sequential(named("mlp.gate_proj", lora_linear(g.ffn, r(gate_proj), l.dropout_percent, l.base)), named("mlp.act_fn", silu())),
                        named("mlp.up_proj", lora_linear(g.ffn, r(up_proj), l.dropout_percent, l.base))),
               named("mlp.down_proj", lora_linear(g.width, r(down_proj), l.dropout_percent, l.base))));
}
constexpr auto llama_lora(const llama_config& g, const lora_config& l) {
  if (g.seq > g.context) gpubudget::detail::invalid_layer_argument();
  if (l.rank <= 0 || l.rank > g.width) gpubudget::detail::lora_rank_must_be_positive_and_at_most_the_layer_width();
  if (l.targets <= 0 || (l.targets & ~std::int64_t{all_linear}) != 0) gpubudget::detail::unknown_lora_target_module();
  auto blocks = named("model.layers", repeat(g.layers, llama_block_lora(g, l)));
  blocks.records[1].flags.checkpoint = g.checkpoint_blocks;
  return sequential(tokens(g.seq), named("model.embed_tokens", frozen_embedding(g.vocab, g.width, l.base)), blocks,
                    named("model.norm", frozen(rms_norm())),
                    named("lm_head", lora_linear(g.vocab, 0, 0, is_quantized(l.base) ? base_weights::half : l.base)));
}

/// Parameter counts as PEFT's print_trainable_parameters() reports them.
struct parameter_counts {
  std::int64_t trainable = 0;
  std::int64_t all = 0;
};

/// All parameters of a Llama-style decoder (untied head): the closed form of models::llama.
constexpr std::int64_t llama_parameter_count(const llama_config& g) {
  const auto d = g.width / g.heads, kv = g.kv_heads * d;
  const auto block = 2 * g.width + 2 * g.width * g.width + 2 * g.width * kv + 3 * g.width * g.ffn;
  return 2 * g.vocab * g.width + g.layers * block + g.width;
}

/// PEFT's counts for LoRA `l` on `g`: every adapted projection in→out adds r·(in + out).
constexpr parameter_counts lora_counts(const llama_config& g, const lora_config& l) {
  const auto kv = g.kv_heads * (g.width / g.heads), D = g.width, F = g.ffn;
  const std::int64_t in_out[7][2] = {{D, D}, {D, kv}, {D, kv}, {D, D}, {D, F}, {D, F}, {F, D}};
  std::int64_t per_layer = 0;
  for (std::size_t i = 0; i < 7; ++i)
    if (l.targets & (std::int64_t{1} << i)) per_layer += l.rank * (in_out[i][0] + in_out[i][1]);
  const auto trainable = checked_mul(g.layers, per_layer);
  return {trainable, llama_parameter_count(g) + trainable};
}

}  // namespace gpubudget::models
