// tools/hf_config.hpp — a zoo entry from a Hugging Face transformers config.json (--hf-config,
// --task, --teacher FILE.json). The reading is the library's optional <gpubudget/hf_config.hpp>
// (which keys, which refusals, which head "architectures" names); the model is
// models::visit_hf_model of that description (gpubudget/models/hf.hpp), so a config read here
// builds the model the zoo's compile-time configs build. This file only wraps it as a zoo entry:
// the family's size options (--seq, --layers, ...) applied before the model is built.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>

#include <gpubudget/hf_config.hpp>

#include "zoo_registry.hpp"

namespace gpubudget::tools {

/// A model built from a config.json: its zoo entry, what the config says and the head built.
struct hf_model {
  zoo_entry entry;
  std::string model_type;
  std::string torch_dtype;
  models::hf_model_config description{};
};

namespace hf_detail {

/// `m` with the command line's size options of its family applied (as the zoo's entries do).
inline models::hf_model_config with_options(models::hf_model_config m, const model_options& o) {
  using models::hf_family;
  switch (m.family) {
    case hf_family::gpt2: {  // the config's attn_pdrop stays unless --dropout or --attn-dropout say otherwise
      const auto attn = m.gpt.attention_dropout_percent;
      m.gpt = detail::gpt_from(m.gpt, o);
      if (!o.values.count("dropout") && !o.values.count("attn-dropout")) m.gpt.attention_dropout_percent = attn;
      break;
    }
    case hf_family::bert: m.bert = detail::bert_from(m.bert, o); break;
    case hf_family::t5: m.t5 = detail::t5_from(m.t5, o); break;
    case hf_family::mixtral: m.moe = detail::moe_from(o, m.moe); [[fallthrough]];
    default: m.llama = detail::llama_from(m.llama, o); break;
  }
  return m;
}

/// The zoo family (which size options apply) of a description.
inline std::string family_of(const models::hf_model_config& m) {
  using models::hf_family;
  return m.family == hf_family::gpt2 ? "gpt" : m.family == hf_family::bert ? "bert" : m.family == hf_family::t5 ? "t5" : "llama";
}

/// The zoo entry of a description: runs visit_hf_model on it with the size options applied; a
/// causal decoder carries its llama_config (and experts) for --lora and --serve.
inline zoo_entry entry_of(const models::hf_model_config& m, const std::string& name) {
  zoo_entry e{name, family_of(m), [m](const model_options& o, const training& t, const device& d) {
                const auto sized = with_options(m, o);
                if (sized.llama.gemma_alternating() && sized.task == models::hf_task::causal_lm) return detail::evaluate_gemma_alternating(sized.llama, t, d);
                return models::visit_hf_model(sized, [&](const auto& net) { return evaluate(net, t, d); });
              }};
  using models::hf_family;
  if (m.family == hf_family::gpt2) e.max_seq = [m](const model_options& o) { return o.get("ctx", m.gpt.context); };
  if (m.family == hf_family::bert) e.max_seq = [m](const model_options&) { return m.bert.max_positions; };
  if (m.family == hf_family::decoder || m.family == hf_family::mixtral) e.max_seq = [m](const model_options& o) { return o.get("ctx", m.llama.context); };
  // a causal LM, or a classifier over the same decoder (--lora builds on both)
  const bool decoder_head = m.task == models::hf_task::causal_lm || m.task == models::hf_task::seq_cls;
  if (decoder_head && (m.family == hf_family::decoder || m.family == hf_family::mixtral)) e.llama = m.llama;
  if (decoder_head && m.family == hf_family::mixtral) e.experts = m.moe;
  if (m.task == models::hf_task::seq_cls) e.labels = m.labels;
  // --lora outside the Llama family: GPT-2's causal LM, BERT's classifier, T5
  if (m.task == models::hf_task::causal_lm && m.family == hf_family::gpt2) e.peft = detail::gpt_peft([m](const model_options& o) { return with_options(m, o).gpt; });
  if (m.task == models::hf_task::seq_cls && m.family == hf_family::bert)
    e.peft = detail::bert_classifier_peft([m](const model_options& o) { return with_options(m, o).bert; }, m.classifier_dropout_percent);
  if (m.family == hf_family::t5) e.peft = detail::t5_peft([m](const model_options& o) { return with_options(m, o).t5; });
  if (m.family == hf_family::t5 && m.t5.sdpa) {  // transformers >= 5.13's T5 (op_rules.md L37)
    e.padded_batch_unmodelled = std::string(models::detail::t5_padded_batch_through_sdpa).substr(std::string("gpubudget: ").size());
    e.budget_note = "\nNote: T5 is budgeted through SDPA, as transformers >= 5.13 runs it (op_rules.md L37); transformers 5.12 and older "
                    "run its eager attention, which keeps every layer's probabilities (fp32, and a 16-bit copy under autocast): to budget that, "
                    "give --hf-config a config.json with \"attn_implementation\": \"eager\".\n";
  }
  // the other heads of GPT-2 and BERT by module name (models::get_peft_model): GPT-2's classifier
  // (PEFT's SEQ_CLS keeps `score` in modules_to_save), BERT's masked LM, either base model
  if (!e.peft && (m.family == hf_family::gpt2 || m.family == hf_family::bert)) {
    const char* saved = m.task == models::hf_task::seq_cls ? "score" : nullptr;
    e.lora_by_name = [m, saved](const std::string& targets, const models::lora_config& l, const model_options& o, const training& t, const device& d) {
      return models::visit_hf_model(with_options(m, o), [&](const auto& net) { return evaluate(models::get_peft_model(net, targets.c_str(), l, saved), t, d); });
    };
    e.lora_default_targets = m.family == hf_family::gpt2 ? detail::gpt2_default_lora_targets : detail::bert_default_lora_targets;
  }
  return e;
}

}  // namespace hf_detail

/// The model a transformers config.json describes, with the head `task` names (default: the
/// one its "architectures" names); std::invalid_argument ("--hf-config: FILE: ...") naming the
/// file and the key when it cannot. Its name is "hf:MODEL_TYPE", with the task when the head is
/// not the family's language-model head (causal-lm; T5's seq2seq). `transformers_version`: the
/// release that runs it (a reference file's; "" for the current one: hf::for_transformers_version).
inline hf_model from_hf_config(const std::string& path, std::optional<models::hf_task> task = std::nullopt,
                               const std::string& transformers_version = "") {
  hf::config_file f;
  try {
    f = hf::load_config(path, task);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--hf-config: ") + e.what());
  }
  hf::for_transformers_version(f.model, transformers_version);
  const auto t = f.model.task;
  const bool lm = t == models::hf_task::causal_lm || t == models::hf_task::seq2seq;
  const std::string name = "hf:" + f.model_type + (lm ? "" : std::string(" ") + models::hf_task_name(t));
  return {hf_detail::entry_of(f.model, name), f.model_type, f.torch_dtype, f.model};
}

}  // namespace gpubudget::tools
