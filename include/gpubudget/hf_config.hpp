// gpubudget/hf_config.hpp — OPTIONAL header: a transformers config.json read at run time into
// models::hf_model_config (gpubudget/models/hf.hpp), the plain description from which
// models::visit_hf_model builds the same model the zoo builds at compile time. It needs
// nlohmann::json (Debian nlohmann-json3-dev; CMake: find_package(nlohmann_json 3) and link
// nlohmann_json::nlohmann_json); nothing else in the library includes it, so the library itself
// stays Boost.Hana-only. Why a header and not only the CLI: a program that budgets whatever
// checkpoint a user hands it reads the same keys, with the same refusals, as `--hf-config`.
//
//   const auto cfg = gpubudget::hf::load_config("config.json");       // or read_config(json, name)
//   const auto b = models::visit_hf_model(cfg.model, [&](const auto& net) { return budget(net, plan, dev); });
//
// The families built exactly: the Llama family (models::llama: RMSNorm, grouped-query rotary
// attention, gated MLP) as llama, mistral, qwen2 (q/k/v biases), qwen3 (q_norm, k_norm), gemma (GeGLU, head_dim,
// (1 + w) norms, embedding x sqrt(hidden)), gemma2 (models::visit_gemma2: four norms a layer, every
// other layer sliding, soft-capped logits), gemma3_text (models::visit_gemma3: four norms a layer,
// q/k norms, sliding layers), olmo2 (models::olmo2: norms after the sublayers, q/k norms over the
// projections), olmo3 (models::visit_olmo3: olmo2's layers, three of four in a window), granite
// (models::granite: Llama's with its multipliers), phi3 (its fused qkv_proj / gate_up_proj hold the same weights) and
// mixtral (models::mixtral: MoE MLPs), each with tie_word_embeddings; gpt2 (models::gpt: tied
// head, learned positions, 4x MLP); bert (models::bert); t5 (models::t5, tied head, ReLU
// feed-forward). A setting the builder cannot express (Llama's attention_bias or mlp_bias,
// another activation, T5 v1.1's gated-gelu or untied head) is std::invalid_argument naming the
// key, never a silently different model. The head follows "architectures" (…ForCausalLM,
// …ForSequenceClassification, BertForMaskedLM, T5ForConditionalGeneration, BertModel) unless
// the caller names a task.
#pragma once
#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>

#include <gpubudget/models/hf.hpp>
#include <nlohmann/json.hpp>

namespace gpubudget::hf {

[[noreturn]] inline void fail(const std::string& path, const std::string& what) {
  throw std::invalid_argument(path + ": " + what);
}

/// config[key] as a whole number >= 1 (a missing key is an error naming it).
inline std::int64_t positive(const nlohmann::json& c, const std::string& path, const char* key) {
  if (!c.contains(key)) fail(path, std::string("missing key \"") + key + "\"");
  const auto& v = c[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1) fail(path, std::string("\"") + key + "\" must be a whole number >= 1");
  return v.get<std::int64_t>();
}
/// config[key] if present (and not null), else `fallback`.
inline std::int64_t positive_or(const nlohmann::json& c, const std::string& path, const char* key, std::int64_t fallback) {
  return c.contains(key) && !c[key].is_null() ? positive(c, path, key) : fallback;
}
inline bool flag_or(const nlohmann::json& c, const std::string& path, const char* key, bool fallback) {
  if (!c.contains(key)) return fallback;
  if (!c[key].is_boolean()) fail(path, std::string("\"") + key + "\" must be true or false");
  return c[key].get<bool>();
}
/// A probability (0..1) as a whole percent.
inline std::int64_t percent_or(const nlohmann::json& c, const std::string& path, const char* key, std::int64_t fallback) {
  if (!c.contains(key)) return fallback;
  if (!c[key].is_number() || c[key].get<double>() < 0 || c[key].get<double>() > 1) fail(path, std::string("\"") + key + "\" must be a probability from 0 to 1");
  return std::llround(c[key].get<double>() * 100);
}
/// A setting the builder cannot express: an error naming the key and the supported value.
inline void require(bool ok, const std::string& path, const std::string& key, const std::string& supported) {
  if (!ok) fail(path, "\"" + key + "\" is not supported for this model_type (supported: " + supported + ")");
}

/// The config's attn_implementation (transformers 5 writes `_attn_implementation` when one was
/// asked for; from_config's default is "sdpa", modeling_utils.py _check_and_adjust_attn_implementation),
/// one of `supported` or an error naming the key.
inline std::string attention_of(const nlohmann::json& c, const std::string& path, std::initializer_list<const char*> supported) {
  std::string key = c.contains("attn_implementation") ? "attn_implementation" : "_attn_implementation";
  if (!c.contains(key) || c[key].is_null()) return "sdpa";
  const auto v = c[key].is_string() ? c[key].get<std::string>() : std::string();
  std::string names;
  for (const char* n : supported) {
    if (v == n) return v;
    names += std::string(names.empty() ? "\"" : ", \"") + n + "\"";
  }
  require(false, path, key, names);
  return v;
}

/// The Llama family's attention from attn_implementation `impl`: SDPA; flash-attn 2, which takes a
/// sliding window itself; or eager, the scores materialized (models::llama_config::eager_attention).
inline void set_attention(models::llama_config& g, const std::string& impl) {
  g.kernel_window = impl == "flash_attention_2";
  g.eager_attention = impl == "eager";
}

/// The config's partial_rotary_factor (1 when absent or null), a number in (0, 1].
inline double partial_rotary_factor(const nlohmann::json& c, const std::string& path) {
  if (!c.contains("partial_rotary_factor") || c["partial_rotary_factor"].is_null()) return 1.0;
  const auto& f = c["partial_rotary_factor"];
  if (!f.is_number() || f.get<double>() <= 0 || f.get<double>() > 1) fail(path, "\"partial_rotary_factor\" must be a number in (0, 1]");
  return f.get<double>();
}

/// A decoder's sizes in transformers' key names (vocab_size, hidden_size, num_hidden_layers,
/// num_attention_heads, num_key_value_heads: default the heads, intermediate_size,
/// max_position_embeddings: the budgeted tokens unless --seq says).
inline models::llama_config decoder_sizes(const nlohmann::json& c, const std::string& path) {
  models::llama_config g{};
  g.vocab = positive(c, path, "vocab_size");
  g.width = positive(c, path, "hidden_size");
  g.layers = positive(c, path, "num_hidden_layers");
  g.heads = positive(c, path, "num_attention_heads");
  g.kv_heads = positive_or(c, path, "num_key_value_heads", g.heads);  // transformers' default
  g.ffn = positive(c, path, "intermediate_size");
  g.context = g.seq = positive(c, path, "max_position_embeddings");
  return g;
}

/// Requires `layer_types`, where the config gives it, to be `period - 1` "sliding_attention" then
/// one "full_attention", repeated (the alternation visit_alternating_layers builds).
inline void require_alternating_layer_types(const nlohmann::json& c, const std::string& path, std::int64_t layers, std::int64_t period,
                                            const char* described) {
  if (!c.contains("layer_types") || c["layer_types"].is_null()) return;
  const auto& types = c["layer_types"];
  bool alternating = types.is_array() && static_cast<std::int64_t>(types.size()) == layers;
  for (std::size_t i = 0; alternating && i < types.size(); ++i)
    alternating = types[i] == (static_cast<std::int64_t>(i + 1) % period == 0 ? "full_attention" : "sliding_attention");
  require(alternating, path, "layer_types", described);
}
/// OLMo 3's window (Olmo3Config: sliding_window 4096 where absent; layer_types three sliding then
/// one full, repeated, where absent).
inline std::int64_t olmo3_window(const nlohmann::json& c, const std::string& path, std::int64_t layers) {
  require(!c.contains("sliding_window") || !c["sliding_window"].is_null(), path, "sliding_window", "a number of tokens (Olmo3Attention's sliding layers)");
  require_alternating_layer_types(c, path, layers, models::olmo3_period, "three \"sliding_attention\" then one \"full_attention\", repeated");
  return positive_or(c, path, "sliding_window", 4096);
}

/// The Llama family's keys; `model_type` decides the defaults transformers gives the others
/// (Qwen2: q/k/v biases; Gemma: GeGLU, embedding scale, tied; Phi-3, Mixtral: as Llama).
inline models::llama_config llama_family_config(const nlohmann::json& c, const std::string& path, const std::string& model_type) {
  const bool gemma = model_type == "gemma", qwen2 = model_type == "qwen2", qwen3 = model_type == "qwen3", olmo3 = model_type == "olmo3";
  const bool olmo2 = model_type == "olmo2" || olmo3;  // Olmo3DecoderLayer is Olmo2DecoderLayer
  models::llama_config g = decoder_sizes(c, path);
  // Qwen3Config's head_dim defaults to 128 (configuration_qwen3.py), not hidden_size / heads
  g.head_dim = gemma ? positive(c, path, "head_dim") : positive_or(c, path, "head_dim", qwen3 ? 128 : 0);
  if (g.head_dim == 0 && g.width % g.heads != 0) fail(path, "\"num_attention_heads\" must divide \"hidden_size\" (or give \"head_dim\")");
  if (g.heads % g.kv_heads != 0) fail(path, "\"num_attention_heads\" must be a multiple of \"num_key_value_heads\"");
  g.tied_head = flag_or(c, path, "tie_word_embeddings", gemma);  // transformers' defaults: Gemma tied, the others untied
  g.use_cache = flag_or(c, path, "use_cache", true);  // PretrainedConfig's default
  g.qkv_bias = qwen2;                                             // Qwen2Attention: q_proj, k_proj, v_proj with bias=True
  g.scaled_embedding = gemma;                                     // GemmaModel: hidden_states * hidden_size**0.5
  g.gemma_norms = gemma;                                          // GemmaRMSNorm: (1 + weight) in fp32, cast back
  g.fused_projections = model_type == "phi3";                     // Phi3Attention.qkv_proj, Phi3MLP.gate_up_proj
  g.qk_norm = qwen3;                                              // Qwen3Attention.q_norm, k_norm (RMSNorm over head_dim)
  g.olmo2 = olmo2;                                                // Olmo2DecoderLayer's norms after the sublayers, q/k norms over the projections
  g.olmo3 = olmo3;                                                // ... and Olmo3Attention's windows on three layers of four
  g.granite = model_type == "granite";                            // GraniteModel's multipliers: a tensor more each, nothing saved
  if (g.granite)  // their values change no byte, but a config that does not give numbers is not Granite's
    for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling"})
      require(!c.contains(key) || c[key].is_number(), path, key, "a number");
  require(!flag_or(c, path, "attention_bias", false), path, "attention_bias", "false");
  require(!flag_or(c, path, "mlp_bias", false), path, "mlp_bias", "false");
  if (gemma) {  // transformers >= 4.39 runs gelu_pytorch_tanh whichever of the two the config names
    for (const char* key : {"hidden_act", "hidden_activation"})
      require(!c.contains(key) || c[key].is_null() || c[key] == "gelu" || c[key] == "gelu_pytorch_tanh", path, key, "\"gelu\" or \"gelu_pytorch_tanh\"");
    g.activation = models::gated_activation::gelu_tanh;
  } else {
    require(!c.contains("hidden_act") || c["hidden_act"] == "silu", path, "hidden_act", "\"silu\"");
  }
  // dropout the decoders are not built with: the attention's (LlamaAttention, Qwen2/3, Gemma,
  // Mistral, Mixtral: `dropout=0.0 if not self.training else self.attention_dropout`) and Phi-3's
  // residual dropouts (Phi3DecoderLayer.resid_attn_dropout, resid_mlp_dropout: nn.Dropout(resid_pdrop))
  require(percent_or(c, path, "attention_dropout", 0) == 0, path, "attention_dropout", "0");
  if (model_type == "phi3") require(percent_or(c, path, "resid_pdrop", 0) == 0, path, "resid_pdrop", "0");
  // Phi-3's partial_rotary_factor (Phi-4-mini: 0.75): RoPE on the first int(head_dim · factor)
  // channels (modeling_phi3.py: Phi3RotaryEmbedding's dim, apply_rotary_pos_emb's torch.cat);
  // another family's RoPE is full width
  const double factor = partial_rotary_factor(c, path);
  require(factor == 1.0 || model_type == "phi3", path, "partial_rotary_factor", "1 (phi3: any)");
  if (factor != 1.0) {
    g.rotary_dim = static_cast<std::int64_t>(static_cast<double>(g.per_head()) * factor);
    if (g.rotary_dim < 2 || g.rotary_dim % 2 != 0) fail(path, "\"partial_rotary_factor\" must give an even number of rotated channels per head");
  }
  // sliding_window: Mistral's, Phi-3's and Mixtral's layers attend within it (their models'
  // create_sliding_window_causal_mask); Qwen2's and Qwen3's only with use_sliding_window, and
  // then from layer max_window_layers on (per-layer windows: not modelled)
  if (qwen2 || qwen3) require(!flag_or(c, path, "use_sliding_window", false), path, "use_sliding_window", "false");
  else if (olmo3) g.sliding_window = olmo3_window(c, path, g.layers);
  else if (olmo2 || g.granite) require(!c.contains("sliding_window") || c["sliding_window"].is_null(), path, "sliding_window", "null (the model's mask is causal)");
  else if (c.contains("sliding_window") && !c["sliding_window"].is_null()) g.sliding_window = positive(c, path, "sliding_window");
  if (g.sliding_window > g.context) g.sliding_window = 0;  // Phi-3-mini-128k's 262144 over 131072 positions: never reached
  // the decoders are budgeted with a fused attention kernel (models::llama_attention); eager's
  // materialized, repeat_kv'd scores are not modelled for them. flash_attention_2 takes the
  // sliding window as an argument: no mask (op_rules.md L18)
  set_attention(g, attention_of(c, path, {"eager", "sdpa", "flash_attention_2"}));
  return g;
}

/// A soft cap's key (final_logit_softcapping, attn_logit_softcapping): whether the config sets one
/// (a positive number), `fallback` where the key is absent, none where it is null.
inline bool softcap_of(const nlohmann::json& c, const std::string& path, const char* key, bool fallback) {
  if (!c.contains(key)) return fallback;
  if (c[key].is_null()) return false;
  if (!c[key].is_number() || c[key].get<double>() <= 0) fail(path, std::string("\"") + key + "\" must be a positive number or null");
  return true;
}

/// What Gemma2Config and Gemma3TextConfig share, with their defaults where a key is absent (head_dim
/// 256, sliding_window 4096, tie_word_embeddings true; final_logit_softcapping 30.0 for Gemma 2, none
/// for Gemma 3, whose released configs have none and which is built without one): Gemma's GeGLU,
/// scaled embedding and (1 + w) norms, `period` required of layer_types.
/// attn_logit_softcapping (Gemma 2's default 50.0, Gemma 3's none) is applied by eager attention alone
/// (sdpa_attention_forward takes no softcap; flash-attn 2 caps inside the kernel, at no memory).
inline models::llama_config gemma_alternating_config(const nlohmann::json& c, const std::string& path, std::int64_t period, const char* described,
                                                     bool softcap_by_default) {
  models::llama_config g = decoder_sizes(c, path);
  g.head_dim = positive_or(c, path, "head_dim", 256);
  g.sliding_window = positive_or(c, path, "sliding_window", 4096);
  if (g.heads % g.kv_heads != 0) fail(path, "\"num_attention_heads\" must be a multiple of \"num_key_value_heads\"");
  g.tied_head = flag_or(c, path, "tie_word_embeddings", true);
  g.activation = models::gated_activation::gelu_tanh, g.scaled_embedding = true, g.gemma_norms = true;
  require(!c.contains("hidden_activation") || c["hidden_activation"] == "gelu_pytorch_tanh", path, "hidden_activation", "\"gelu_pytorch_tanh\"");
  require_alternating_layer_types(c, path, g.layers, period, described);
  g.logit_softcap = softcap_of(c, path, "final_logit_softcapping", softcap_by_default);
  require(!flag_or(c, path, "attention_bias", false), path, "attention_bias", "false");
  require(percent_or(c, path, "attention_dropout", 0) == 0, path, "attention_dropout", "0");
  set_attention(g, attention_of(c, path, {"eager", "sdpa", "flash_attention_2"}));
  g.attention_softcap = softcap_of(c, path, "attn_logit_softcapping", softcap_by_default) && g.eager_attention;
  return g;
}

/// Gemma3TextConfig's keys (model_type gemma3_text: Gemma3ForCausalLM, google/gemma-3-1b-it)
/// (configuration_gemma3.py's defaults: gemma_alternating_config); its period of five sliding
/// layers and one full is required as gemma3_period, whether the config says it by
/// sliding_window_pattern or by layer_types.
inline models::llama_config gemma3_config_of(const nlohmann::json& c, const std::string& path) {
  auto g = gemma_alternating_config(c, path, models::gemma3_period, "five \"sliding_attention\" then one \"full_attention\", repeated", false);
  g.gemma3 = true;
  require(!g.logit_softcap, path, "final_logit_softcapping", "null");
  require(positive_or(c, path, "sliding_window_pattern", models::gemma3_period) == models::gemma3_period, path, "sliding_window_pattern", "6");
  require(!flag_or(c, path, "use_bidirectional_attention", false), path, "use_bidirectional_attention", "false");
  return g;
}
/// Gemma2Config's keys (model_type gemma2: Gemma2ForCausalLM, google/gemma-2-2b) (configuration_gemma2.py's
/// defaults: gemma_alternating_config); a sliding layer then a full one, as gemma2_period.
inline models::llama_config gemma2_config_of(const nlohmann::json& c, const std::string& path) {
  auto g = gemma_alternating_config(c, path, models::gemma2_period, "\"sliding_attention\" then \"full_attention\", repeated", true);
  g.gemma2 = true;
  return g;
}

/// Mixtral's experts (num_local_experts, num_experts_per_tok).
inline models::moe_config moe_config_of(const nlohmann::json& c, const std::string& path) {
  models::moe_config m{};
  m.experts = positive(c, path, "num_local_experts");
  m.top_k = positive(c, path, "num_experts_per_tok");
  if (m.top_k > m.experts) fail(path, "\"num_experts_per_tok\" must be at most \"num_local_experts\"");
  return m;
}

/// T5ForConditionalGeneration's sizes and dropout (the original T5: ReLU feed-forward, tied head).
inline models::t5_config t5_config_of(const nlohmann::json& c, const std::string& path) {
  models::t5_config t{};
  t.vocab = positive(c, path, "vocab_size");
  t.width = positive(c, path, "d_model");
  t.head_width = positive(c, path, "d_kv");
  t.ffn = positive(c, path, "d_ff");
  t.layers = positive(c, path, "num_layers");
  t.decoder_layers = positive_or(c, path, "num_decoder_layers", t.layers);  // T5Config: defaults to num_layers
  t.heads = positive(c, path, "num_heads");
  t.buckets = positive_or(c, path, "relative_attention_num_buckets", 32);
  t.dropout_percent = percent_or(c, path, "dropout_rate", 10);
  if (t.layers < 2 || t.decoder_layers < 2) fail(path, "\"num_layers\" and \"num_decoder_layers\" must be at least 2");
  require(!c.contains("feed_forward_proj") || c["feed_forward_proj"] == "relu", path, "feed_forward_proj", "\"relu\" (the original T5)");
  require(flag_or(c, path, "tie_word_embeddings", true), path, "tie_word_embeddings", "true (lm_head tied to the shared embedding)");
  require(flag_or(c, path, "is_encoder_decoder", true), path, "is_encoder_decoder", "true");
  t.seq = t.target_seq = 512;  // n_positions of the original checkpoints: the pre-training length
  // transformers >= 5.17 runs T5Attention through SDPA by default (PR #47014); "eager" as 5.12 and 4.x did
  t.sdpa = attention_of(c, path, {"eager", "sdpa"}) == "sdpa";
  t.use_cache = flag_or(c, path, "use_cache", true);  // T5Config's default
  return t;
}

/// GPT-2's sizes and dropout.
inline models::gpt_config gpt2_config_of(const nlohmann::json& c, const std::string& path) {
  models::gpt_config g{};
  g.vocab = positive(c, path, "vocab_size");
  g.context = positive(c, path, "n_positions");
  g.width = positive(c, path, "n_embd");
  g.layers = positive(c, path, "n_layer");
  g.heads = positive(c, path, "n_head");
  g.seq = g.context;
  if (g.width % g.heads != 0) fail(path, "\"n_head\" must divide \"n_embd\"");
  require(positive_or(c, path, "n_inner", 4 * g.width) == 4 * g.width, path, "n_inner", "null or 4 * n_embd");
  require(flag_or(c, path, "tie_word_embeddings", true), path, "tie_word_embeddings", "true (lm_head tied to wte)");
  require(!c.contains("activation_function") || c["activation_function"] == "gelu_new" || c["activation_function"] == "gelu", path,
          "activation_function", "\"gelu_new\" or \"gelu\"");
  // transformers' ACT2FN: "gelu_new" (GPT2Config's default) is NewGELUActivation, the formula
  // written out; "gelu" is F.gelu (op_rules.md 2.6 #65)
  g.gelu_new = !c.contains("activation_function") || c["activation_function"] == "gelu_new";
  g.dropout_percent = percent_or(c, path, "resid_pdrop", 10);
  // one dropout rate for the embedding's (transformer.drop) and the residual ones (models::gpt)
  require(percent_or(c, path, "embd_pdrop", 10) == g.dropout_percent, path, "embd_pdrop", "the same as resid_pdrop");
  g.attention_dropout_percent = percent_or(c, path, "attn_pdrop", 10);
  // transformers 5's GPT2Attention: eager materializes q @ kᵀ and the dropped probabilities;
  // sdpa (the default) and flash_attention_2 run a fused kernel with the dropout inside it
  // (modeling_gpt2.py: attention_interface(..., dropout=self.attn_dropout.p if self.training))
  g.attention = attention_of(c, path, {"eager", "sdpa", "flash_attention_2"}) == "eager" ? attention_impl::split_qkv : attention_impl::flash;
  g.packed_c_attn = true;  // GPT2Attention.c_attn: one Conv1D(3 * n_embd, n_embd), split into q, k, v
  g.use_cache = flag_or(c, path, "use_cache", true);  // GPT2Config's default: a DynamicCache in every forward
  g.linear_head = true;  // GPT2LMHeadModel.lm_head = nn.Linear(n_embd, vocab_size, bias=False), tied (transformers-graphs/gpt2-*.json: aten.linear)
  return g;
}


/// BertModel's sizes and dropout from a bert config.json (the pooler included).
inline models::bert_config bert_config_of(const nlohmann::json& c, const std::string& path) {
  models::bert_config b{};
  b.vocab = positive(c, path, "vocab_size");
  b.width = positive(c, path, "hidden_size");
  b.layers = positive(c, path, "num_hidden_layers");
  b.heads = positive(c, path, "num_attention_heads");
  b.ffn = positive(c, path, "intermediate_size");
  b.max_positions = positive(c, path, "max_position_embeddings");
  b.type_vocab = positive(c, path, "type_vocab_size");
  b.seq = b.max_positions;
  if (b.width % b.heads != 0) fail(path, "\"num_attention_heads\" must divide \"hidden_size\"");
  require(!c.contains("hidden_act") || c["hidden_act"] == "gelu", path, "hidden_act", "\"gelu\"");
  b.dropout_percent = percent_or(c, path, "hidden_dropout_prob", 10);
  b.attention_dropout_percent = percent_or(c, path, "attention_probs_dropout_prob", 10);
  b.attention = attention_of(c, path, {"eager", "sdpa"}) == "eager" ? attention_impl::separate_qkv : attention_impl::separate_qkv_sdpa;
  return b;
}

/// The head an "architectures" entry names: transformers' task classes by their suffix
/// (LlamaForCausalLM, GPT2LMHeadModel, Qwen2ForSequenceClassification, BertForMaskedLM,
/// T5ForConditionalGeneration; BertModel, LlamaModel: the bare model), nullopt for another.
inline std::optional<models::hf_task> task_of_architecture(const std::string& a) {
  auto ends = [&](const std::string& s) { return a.size() >= s.size() && a.compare(a.size() - s.size(), s.size(), s) == 0; };
  if (ends("ForCausalLM") || ends("LMHeadModel")) return models::hf_task::causal_lm;
  if (ends("ForSequenceClassification")) return models::hf_task::seq_cls;
  if (ends("ForMaskedLM")) return models::hf_task::masked_lm;
  if (ends("ForConditionalGeneration")) return models::hf_task::seq2seq;
  if (ends("Model") && a.find("For") == std::string::npos) return models::hf_task::base;
  return std::nullopt;
}

/// The task of a config: `asked` if given, else its first "architectures" entry's; an error
/// naming the key when neither says.
inline models::hf_task task_of(const nlohmann::json& c, const std::string& path, std::optional<models::hf_task> asked, std::string& architecture) {
  if (c.contains("architectures") && c["architectures"].is_array() && !c["architectures"].empty() && c["architectures"][0].is_string())
    architecture = c["architectures"][0].get<std::string>();
  if (asked) return *asked;
  if (architecture.empty()) fail(path, "no \"architectures\" entry names the head: give the task (--task causal-lm|seq-cls|masked-lm|seq2seq|base)");
  const auto t = task_of_architecture(architecture);
  if (!t) fail(path, "\"architectures\" names " + architecture + ", a head this library does not model: give the task (--task causal-lm|seq-cls|masked-lm|seq2seq|base)");
  return *t;
}

/// num_labels of a classification head: the config's num_labels, else its id2label's size, else
/// PretrainedConfig's default 2 (transformers configuration_utils.py).
inline std::int64_t labels_of(const nlohmann::json& c, const std::string& path) {
  if (c.contains("num_labels")) return positive(c, path, "num_labels");
  if (c.contains("id2label") && c["id2label"].is_object() && !c["id2label"].empty()) return static_cast<std::int64_t>(c["id2label"].size());
  return 2;
}

/// A config.json's model: its description, model_type, torch_dtype ("" if absent) and the
/// architecture it names ("" if none).
struct config_file {
  models::hf_model_config model{};
  std::string model_type, torch_dtype, architecture;
};

/// The family's sizes of model_type `t` into `m` (an error naming an unsupported model_type).
inline void read_family(const nlohmann::json& c, const std::string& path, const std::string& t, models::hf_model_config& m) {
  using models::hf_family;
  if (t == "llama" || t == "mistral" || t == "qwen2" || t == "qwen3" || t == "gemma" || t == "phi3" || t == "olmo2" || t == "olmo3" ||
      t == "granite")
    m.family = hf_family::decoder, m.llama = llama_family_config(c, path, t);
  else if (t == "gemma3_text") m.family = hf_family::decoder, m.llama = gemma3_config_of(c, path);
  else if (t == "gemma2") m.family = hf_family::decoder, m.llama = gemma2_config_of(c, path);
  else if (t == "gemma3") fail(path, "model_type 'gemma3' is Gemma3ForConditionalGeneration (a vision tower beside the text model): give its \"text_config\" as a config of model_type gemma3_text");
  else if (t == "mixtral") m.family = hf_family::mixtral, m.llama = llama_family_config(c, path, t), m.moe = moe_config_of(c, path);
  else if (t == "gpt2") m.family = hf_family::gpt2, m.gpt = gpt2_config_of(c, path);
  else if (t == "bert") m.family = hf_family::bert, m.bert = bert_config_of(c, path);
  else if (t == "t5") m.family = hf_family::t5, m.t5 = t5_config_of(c, path);
  else fail(path, "model_type '" + t + "' is not supported (supported: llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, olmo2, olmo3, granite, phi3, mixtral, gpt2, bert, t5)");
}

/// The model a parsed config.json describes (`path` names it in errors); `task` overrides the
/// head its "architectures" names. std::invalid_argument naming the key when it cannot.
inline config_file read_config(const nlohmann::json& c, const std::string& path, std::optional<models::hf_task> task = std::nullopt) {
  if (!c.is_object()) fail(path, "not a JSON object");
  if (!c.contains("model_type") || !c["model_type"].is_string()) fail(path, "missing key \"model_type\"");
  config_file f{};
  f.model_type = c["model_type"].get<std::string>();
  if (c.contains("torch_dtype") && c["torch_dtype"].is_string()) f.torch_dtype = c["torch_dtype"].get<std::string>();
  if (!f.torch_dtype.empty() && f.torch_dtype != "float32" && f.torch_dtype != "float16" && f.torch_dtype != "bfloat16")
    fail(path, "\"torch_dtype\" '" + f.torch_dtype + "' is not one of float32, float16, bfloat16");
  read_family(c, path, f.model_type, f.model);
  f.model.task = task_of(c, path, task, f.architecture);
  if (const char* why = models::hf_task_unsupported(f.model.family, f.model.task))
    fail(path, std::string("task ") + models::hf_task_name(f.model.task) + " of model_type " + f.model_type + ": " + why);
  if (f.model.task == models::hf_task::seq_cls) f.model.labels = labels_of(c, path);
  const bool own = c.contains("classifier_dropout") && c["classifier_dropout"].is_number();  // BertForSequenceClassification
  f.model.classifier_dropout_percent = own ? percent_or(c, path, "classifier_dropout", 0) : f.model.bert.dropout_percent;
  return f;
}

/// The first transformers release whose T5Attention runs through SDPA (attn_implementation "sdpa",
/// its default from then on): PR #47014, merged 2026-07-30. Measured: 5.12.1 ran T5 eager
/// (pytorch-2.6-cpu-transformers.json), 5.17.0 ran SDPA (cuda-h200/hf_t5_small_b16_t512_bf16.json.gz);
/// 5.13, the first release after the merge, is taken as the first with it (op_rules.md L37).
inline constexpr int t5_sdpa_since[] = {5, 13};

/// A description as transformers `version` ("MAJOR.MINOR[.PATCH]", as a reference file's
/// environment records it; "" for the current one) builds it: before t5_sdpa_since, T5 eager.
inline void for_transformers_version(models::hf_model_config& m, const std::string& version) {
  if (version.empty() || m.family != models::hf_family::t5) return;
  int major = 0, minor = 0;
  std::size_t k = 0;
  while (k < version.size() && version[k] >= '0' && version[k] <= '9') major = major * 10 + (version[k++] - '0');
  if (k < version.size() && version[k] == '.') ++k;
  while (k < version.size() && version[k] >= '0' && version[k] <= '9') minor = minor * 10 + (version[k++] - '0');
  if (major < t5_sdpa_since[0] || (major == t5_sdpa_since[0] && minor < t5_sdpa_since[1])) m.t5.sdpa = false;
}

/// read_config of the file at `path`.
inline config_file load_config(const std::string& path, std::optional<models::hf_task> task = std::nullopt) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot open the file");
  nlohmann::json c;
  try {
    c = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error&) {
    fail(path, "not valid JSON");
  }
  return read_config(c, path, task);
}

}  // namespace gpubudget::hf
