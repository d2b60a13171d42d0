// tools/hf_config.hpp — a zoo entry from a Hugging Face transformers config.json (--hf-config).
//
// The families the zoo builds exactly: the Llama family (models::llama: RMSNorm, grouped-query
// rotary attention, gated MLP) as llama, mistral, qwen2 (q/k/v biases), gemma (GeGLU, head_dim,
// embedding × √hidden), phi3 (its fused qkv_proj / gate_up_proj hold the same weights) and
// mixtral (models::mixtral: MoE MLPs), each with tie_word_embeddings; gpt2 (models::gpt: tied
// head, learned positions, 4x MLP); bert (models::bert with the pooler); t5 (models::t5, tied
// head, ReLU feed-forward). A setting the builder cannot express (Llama's attention_bias or
// mlp_bias, another activation, T5 v1.1's gated-gelu or untied head) is an error naming the
// key, never a silently different model. The library stays JSON-free:
// nlohmann::json is the tool's dependency only.
#pragma once
#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "zoo_registry.hpp"

namespace gpubudget::tools {

/// A model built from a config.json: its zoo entry and the config's torch_dtype ("" if absent).
struct hf_model {
  zoo_entry entry;
  std::string model_type;
  std::string torch_dtype;
};

namespace hf {

[[noreturn]] inline void fail(const std::string& path, const std::string& what) {
  throw std::invalid_argument("--hf-config: " + path + ": " + what);
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

/// The Llama family's keys; `model_type` decides the defaults transformers gives the others
/// (Qwen2: q/k/v biases; Gemma: GeGLU, embedding scale, tied; Phi-3, Mixtral: as Llama).
inline models::llama_config llama_family_config(const nlohmann::json& c, const std::string& path, const std::string& model_type) {
  const bool gemma = model_type == "gemma", qwen2 = model_type == "qwen2";
  models::llama_config g{};
  g.vocab = positive(c, path, "vocab_size");
  g.width = positive(c, path, "hidden_size");
  g.layers = positive(c, path, "num_hidden_layers");
  g.heads = positive(c, path, "num_attention_heads");
  g.kv_heads = positive_or(c, path, "num_key_value_heads", g.heads);  // transformers' default
  g.ffn = positive(c, path, "intermediate_size");
  g.context = positive(c, path, "max_position_embeddings");
  g.seq = g.context;
  g.head_dim = gemma ? positive(c, path, "head_dim") : positive_or(c, path, "head_dim", 0);
  if (g.head_dim == 0 && g.width % g.heads != 0) fail(path, "\"num_attention_heads\" must divide \"hidden_size\" (or give \"head_dim\")");
  if (g.heads % g.kv_heads != 0) fail(path, "\"num_attention_heads\" must be a multiple of \"num_key_value_heads\"");
  g.tied_head = flag_or(c, path, "tie_word_embeddings", gemma);  // transformers' defaults: Gemma tied, the others untied
  g.qkv_bias = qwen2;                                             // Qwen2Attention: q_proj, k_proj, v_proj with bias=True
  g.scaled_embedding = gemma;                                     // GemmaModel: hidden_states * hidden_size**0.5
  g.fused_projections = model_type == "phi3";                     // Phi3Attention.qkv_proj, Phi3MLP.gate_up_proj
  require(!flag_or(c, path, "attention_bias", false), path, "attention_bias", "false");
  require(!flag_or(c, path, "mlp_bias", false), path, "mlp_bias", "false");
  if (gemma) {  // transformers >= 4.39 runs gelu_pytorch_tanh whichever of the two the config names
    for (const char* key : {"hidden_act", "hidden_activation"})
      require(!c.contains(key) || c[key].is_null() || c[key] == "gelu" || c[key] == "gelu_pytorch_tanh", path, key, "\"gelu\" or \"gelu_pytorch_tanh\"");
    g.activation = models::gated_activation::gelu_tanh;
  } else {
    require(!c.contains("hidden_act") || c["hidden_act"] == "silu", path, "hidden_act", "\"silu\"");
  }
  // sliding_window (mistral, phi3, qwen2): a flash kernel's memory does not depend on the window
  if (c.contains("sliding_window") && !c["sliding_window"].is_null()) positive(c, path, "sliding_window");
  // the decoders are budgeted with a fused attention kernel (models::llama_attention); eager's
  // materialized, repeat_kv'd scores are not modelled for them
  attention_of(c, path, {"sdpa", "flash_attention_2"});
  return g;
}

inline zoo_entry llama_entry(const nlohmann::json& c, const std::string& path, const std::string& name, const std::string& model_type) {
  return detail::llama_model(name, llama_family_config(c, path, model_type));
}

inline zoo_entry mixtral_entry(const nlohmann::json& c, const std::string& path, const std::string& name) {
  const auto g = llama_family_config(c, path, "mixtral");
  models::moe_config m{};
  m.experts = positive(c, path, "num_local_experts");
  m.top_k = positive(c, path, "num_experts_per_tok");
  if (m.top_k > m.experts) fail(path, "\"num_experts_per_tok\" must be at most \"num_local_experts\"");
  return detail::mixtral_model(name, g, m);
}

inline zoo_entry t5_entry(const nlohmann::json& c, const std::string& path, const std::string& name) {
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
  return detail::t5_model(name, t);
}

inline zoo_entry gpt2_entry(const nlohmann::json& c, const std::string& path, const std::string& name) {
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
  g.dropout_percent = percent_or(c, path, "resid_pdrop", 10);
  g.attention_dropout_percent = percent_or(c, path, "attn_pdrop", 10);
  // transformers 5's GPT2Attention: eager materializes q @ kᵀ and the dropped probabilities;
  // sdpa (the default) and flash_attention_2 run a fused kernel with the dropout inside it
  // (modeling_gpt2.py: attention_interface(..., dropout=self.attn_dropout.p if self.training))
  g.attention = attention_of(c, path, {"eager", "sdpa", "flash_attention_2"}) == "eager" ? attention_impl::split_qkv : attention_impl::flash;
  return detail::gpt_model(name, g);
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

inline zoo_entry bert_entry(const nlohmann::json& c, const std::string& path, const std::string& name) {
  return detail::bert_model(name, bert_config_of(c, path));
}

}  // namespace hf

/// The model a transformers config.json describes; std::invalid_argument ("--hf-config: ...")
/// naming the file and the key when it cannot.
inline hf_model from_hf_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) hf::fail(path, "cannot open the file");
  nlohmann::json c;
  try {
    c = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error&) {
    hf::fail(path, "not valid JSON");
  }
  if (!c.is_object()) hf::fail(path, "not a JSON object");
  if (!c.contains("model_type") || !c["model_type"].is_string()) hf::fail(path, "missing key \"model_type\"");
  hf_model m{};
  m.model_type = c["model_type"].get<std::string>();
  if (c.contains("torch_dtype") && c["torch_dtype"].is_string()) m.torch_dtype = c["torch_dtype"].get<std::string>();
  if (!m.torch_dtype.empty() && m.torch_dtype != "float32" && m.torch_dtype != "float16" && m.torch_dtype != "bfloat16")
    hf::fail(path, "\"torch_dtype\" '" + m.torch_dtype + "' is not one of float32, float16, bfloat16");
  const std::string name = "hf:" + m.model_type;
  const auto& t = m.model_type;
  if (t == "llama" || t == "mistral" || t == "qwen2" || t == "gemma" || t == "phi3") m.entry = hf::llama_entry(c, path, name, t);
  else if (t == "mixtral") m.entry = hf::mixtral_entry(c, path, name);
  else if (t == "gpt2") m.entry = hf::gpt2_entry(c, path, name);
  else if (t == "bert") m.entry = hf::bert_entry(c, path, name);
  else if (t == "t5") m.entry = hf::t5_entry(c, path, name);
  else hf::fail(path, "model_type '" + t + "' is not supported (supported: llama, mistral, qwen2, gemma, phi3, mixtral, gpt2, bert, t5)");
  return m;
}

}  // namespace gpubudget::tools
