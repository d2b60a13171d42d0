// tools/hf_config.hpp — a zoo entry from a Hugging Face transformers config.json (--hf-config).
//
// The families the zoo builds exactly: llama and mistral (models::llama: RMSNorm, grouped-query
// rotary attention, SwiGLU, untied head, no biases), gpt2 (models::gpt: tied head, learned
// positions, 4x MLP), bert (models::bert with the pooler). A setting the builder cannot express
// (a tied llama head, attention or MLP biases, another activation, head_dim != hidden/heads)
// is an error naming the key, never a silently different model. The library stays JSON-free:
// nlohmann::json is the tool's dependency only.
#pragma once
#include <cmath>
#include <cstdint>
#include <fstream>
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

inline zoo_entry llama_entry(const nlohmann::json& c, const std::string& path, const std::string& name) {
  models::llama_config g{};
  g.vocab = positive(c, path, "vocab_size");
  g.width = positive(c, path, "hidden_size");
  g.layers = positive(c, path, "num_hidden_layers");
  g.heads = positive(c, path, "num_attention_heads");
  g.kv_heads = positive_or(c, path, "num_key_value_heads", g.heads);  // transformers' default
  g.ffn = positive(c, path, "intermediate_size");
  g.context = positive(c, path, "max_position_embeddings");
  g.seq = g.context;
  if (g.width % g.heads != 0 || g.heads % g.kv_heads != 0) fail(path, "\"num_attention_heads\" must divide \"hidden_size\" and be a multiple of \"num_key_value_heads\"");
  require(!flag_or(c, path, "tie_word_embeddings", false), path, "tie_word_embeddings", "false (an untied lm_head)");
  require(!flag_or(c, path, "attention_bias", false), path, "attention_bias", "false");
  require(!flag_or(c, path, "mlp_bias", false), path, "mlp_bias", "false");
  require(!c.contains("hidden_act") || c["hidden_act"] == "silu", path, "hidden_act", "\"silu\"");
  require(positive_or(c, path, "head_dim", g.width / g.heads) == g.width / g.heads, path, "head_dim", "hidden_size / num_attention_heads");
  // sliding_window (mistral): a flash kernel's memory does not depend on the window
  if (c.contains("sliding_window") && !c["sliding_window"].is_null()) positive(c, path, "sliding_window");
  return detail::llama_model(name, g);
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
  return detail::gpt_model(name, g);
}

inline zoo_entry bert_entry(const nlohmann::json& c, const std::string& path, const std::string& name) {
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
  return detail::bert_model(name, b);
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
  if (m.model_type == "llama" || m.model_type == "mistral") m.entry = hf::llama_entry(c, path, name);
  else if (m.model_type == "gpt2") m.entry = hf::gpt2_entry(c, path, name);
  else if (m.model_type == "bert") m.entry = hf::bert_entry(c, path, name);
  else hf::fail(path, "model_type '" + m.model_type + "' is not supported (supported: llama, mistral, gpt2, bert)");
  return m;
}

}  // namespace gpubudget::tools
