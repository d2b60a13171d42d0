// gpubudget/models/hf.hpp — a Hugging Face transformers model as a plain description, so that a
// config read at run time builds the same model the zoo builds at compile time:
//
//   models::hf_model_config m{};                     // what a config.json says (hf_config.hpp reads one)
//   m.family = models::hf_family::decoder;
//   m.task = models::hf_task::seq_cls;               // LlamaForSequenceClassification
//   m.llama = models::llama2_7b(512);
//   const auto b = models::visit_hf_model(m, [&](const auto& net) { return budget(net, plan, device); });
//
// The description is JSON-free (plain structs of the families' configs); the optional header
// <gpubudget/hf_config.hpp> fills it from a config.json with nlohmann::json, for programs that
// have that library (the CLI's --hf-config and --task read configs through it).
//
// The heads are transformers 5's task classes: causal_lm (…ForCausalLM, GPT2LMHeadModel),
// seq_cls (…ForSequenceClassification), masked_lm (BertForMaskedLM), seq2seq
// (T5ForConditionalGeneration) and base (BertModel with its pooler, what AutoModel loads).
#pragma once
#include <cstdint>

#include <gpubudget/models/transformers.hpp>

namespace gpubudget::models {

/// The families the description builds: the Llama-style decoders (llama, mistral, qwen2, qwen3, gemma,
/// phi3: llama_config, Phi-3 with fused_projections), Mixtral's MoE decoder, GPT-2, BERT, T5.
enum class hf_family : std::int64_t { decoder, mixtral, gpt2, bert, t5 };

/// The head on the model (transformers' task class).
enum class hf_task : std::int64_t { causal_lm, seq_cls, masked_lm, seq2seq, base };

/// The task's name as the CLI's --task spells it.
constexpr const char* hf_task_name(hf_task t) {
  switch (t) {
    case hf_task::causal_lm: return "causal-lm";
    case hf_task::seq_cls: return "seq-cls";
    case hf_task::masked_lm: return "masked-lm";
    case hf_task::seq2seq: return "seq2seq";
    case hf_task::base: return "base";
  }
  return "?";
}

/// A transformers model: its family's sizes (only the family's config is read) and its head.
struct hf_model_config {
  hf_family family = hf_family::decoder;
  hf_task task = hf_task::causal_lm;
  llama_config llama{};  ///< decoder and mixtral
  moe_config moe{};      ///< mixtral
  gpt_config gpt{};
  bert_config bert{};
  t5_config t5{};
  std::int64_t labels = 2;                       ///< num_labels of a seq_cls head (PretrainedConfig's default 2)
  std::int64_t classifier_dropout_percent = 10;  ///< BERT's classifier dropout (classifier_dropout, else hidden_dropout_prob)
};

/// Why `family` has no `task` head here (nullptr: it has one). The refusals name what is missing:
/// a head transformers has but this library does not model says so; a head the architecture
/// cannot have says that.
constexpr const char* hf_task_unsupported(hf_family f, hf_task t) {
  const bool decoder = f == hf_family::decoder || f == hf_family::mixtral || f == hf_family::gpt2;
  if (decoder && (t == hf_task::causal_lm || t == hf_task::seq_cls)) return nullptr;
  if (decoder && t == hf_task::masked_lm) return "a decoder-only model has no masked-lm head (transformers has no ...ForMaskedLM for it)";
  if (decoder && t == hf_task::seq2seq) return "a decoder-only model has no seq2seq head (seq2seq needs an encoder-decoder: t5)";
  if (decoder) return "the bare decoder (base) is not modelled: give causal-lm or seq-cls";
  if (f == hf_family::bert && (t == hf_task::seq_cls || t == hf_task::masked_lm || t == hf_task::base)) return nullptr;
  if (f == hf_family::bert && t == hf_task::causal_lm) return "BERT is an encoder: BertLMHeadModel (is_decoder) is not modelled; give seq-cls, masked-lm or base";
  if (f == hf_family::bert) return "BERT is an encoder: it has no seq2seq head; give seq-cls, masked-lm or base";
  if (t == hf_task::seq2seq) return nullptr;  // t5
  if (t == hf_task::seq_cls) return "T5ForSequenceClassification is not modelled; give seq2seq";
  return "T5 is an encoder-decoder: its head here is seq2seq (T5ForConditionalGeneration)";
}

namespace detail {
/// The decoder family's model of `m`'s task (Phi-3's packed projections included).
template <class F>
constexpr decltype(auto) visit_hf_decoder(const hf_model_config& m, F&& f) {
  const auto& g = m.llama;
  if (m.family == hf_family::mixtral) return m.task == hf_task::seq_cls ? f(mixtral_seq_cls(g, m.moe, m.labels)) : f(mixtral(g, m.moe));
  if (g.fused_projections) return m.task == hf_task::seq_cls ? f(phi3_seq_cls(g, m.labels)) : f(phi3(g));
  if (g.gemma3) {
    if (m.task != hf_task::causal_lm) gpubudget::detail::fail("gpubudget: Gemma 3's head here is causal-lm (Gemma3ForCausalLM)");
    return visit_gemma3(g, f);
  }
  if (g.gemma2) {
    if (m.task != hf_task::causal_lm) gpubudget::detail::fail("gpubudget: Gemma 2's head here is causal-lm (Gemma2ForCausalLM)");
    return visit_gemma2(g, f);
  }
  if (g.granite) {
    if (m.task != hf_task::causal_lm) gpubudget::detail::fail("gpubudget: Granite's head here is causal-lm (GraniteForCausalLM)");
    return f(granite(g));
  }
  if (g.olmo3) {
    if (m.task != hf_task::causal_lm) gpubudget::detail::fail("gpubudget: OLMo 3's head here is causal-lm (Olmo3ForCausalLM)");
    return visit_olmo3(g, f);
  }
  if (g.olmo2) {
    if (m.task != hf_task::causal_lm) gpubudget::detail::fail("gpubudget: OLMo 2's head here is causal-lm (Olmo2ForCausalLM)");
    return f(olmo2(g));
  }
  return m.task == hf_task::seq_cls ? f(llama_seq_cls(g, m.labels)) : f(llama(g));
}
}  // namespace detail

/// Calls `f` with the model `m` describes (a model<N>; every call of `f` must return the same
/// type, e.g. a memory_budget) and returns what it returns. A family without the task's head is
/// gpubudget::detail::fail with hf_task_unsupported's reason (std::invalid_argument at run time).
template <class F>
constexpr decltype(auto) visit_hf_model(const hf_model_config& m, F&& f) {
  if (const char* why = hf_task_unsupported(m.family, m.task)) gpubudget::detail::fail(why);
  switch (m.family) {
    case hf_family::gpt2: return m.task == hf_task::seq_cls ? f(gpt_seq_cls(m.gpt, m.labels)) : f(gpt(m.gpt));
    case hf_family::bert:
      return m.task == hf_task::seq_cls ? f(bert_seq_cls(m.bert, m.labels, m.classifier_dropout_percent))
             : m.task == hf_task::masked_lm ? f(bert_masked_lm(m.bert))
                                            : f(bert(m.bert));
    case hf_family::t5: return f(t5(m.t5));
    default: return detail::visit_hf_decoder(m, f);
  }
}

/// The tokens per sample of `m` (the encoder's for T5).
constexpr std::int64_t hf_sequence(const hf_model_config& m) {
  switch (m.family) {
    case hf_family::gpt2: return m.gpt.seq;
    case hf_family::bert: return m.bert.seq;
    case hf_family::t5: return m.t5.seq;
    default: return m.llama.seq;
  }
}

}  // namespace gpubudget::models
