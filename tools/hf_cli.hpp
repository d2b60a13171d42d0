// tools/hf_cli.hpp — the command line's transformers flags, kept apart from estimate.cpp:
//
//   gpubudget --hf-config config.json [--task causal-lm|seq-cls|masked-lm|seq2seq|base] ...
//   gpubudget resnet50 --teacher path/to/config.json ...      (a teacher from a config.json)
//
// --task picks the head (transformers' task class); without it the config's "architectures"
// decides (LlamaForCausalLM: causal-lm, BertForMaskedLM: masked-lm, ...). Which flags combine
// with which config: --lora and --serve build on a causal decoder of the Llama family or Mixtral
// (llm_cli.hpp; --lora also on GPT-2's causal LM, BERT's classifier and T5), --quant on their weights; everything else (--gpus, --teacher, --svg, the step's
// flags) takes any family and head. A combination that cannot be budgeted is a usage error
// (exit 2) naming what is missing.
#pragma once
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "hf_config.hpp"

namespace gpubudget::tools {

inline std::vector<cli::option_spec> hf_options() {
  return {{"task", true, "T",
           "with --hf-config: the head, causal-lm | seq-cls | masked-lm | seq2seq | base (default: the config's \"architectures\", e.g. "
           "BertForMaskedLM: masked-lm)"}};
}

/// --task T (nullopt without the flag); --task without --hf-config is an error.
inline std::optional<models::hf_task> parse_task(const cli::parsed_args& a) {
  if (!a.has("task")) return std::nullopt;
  if (!a.has("hf-config")) throw cli::usage_error("--task needs --hf-config FILE (a zoo model's head is part of its name)");
  const auto t = cli::parse_choice("--task", *a.get("task"), {"causal-lm", "seq-cls", "masked-lm", "seq2seq", "base"});
  using models::hf_task;
  return t == "causal-lm" ? hf_task::causal_lm : t == "seq-cls" ? hf_task::seq_cls : t == "masked-lm" ? hf_task::masked_lm
         : t == "seq2seq" ? hf_task::seq2seq : hf_task::base;
}

/// The flags that build on a causal decoder of the Llama family or Mixtral (--lora, --serve, and
/// --quant through them), checked against the config's model: a usage error naming what is missing.
inline void check_hf_flags(const cli::parsed_args& a, const hf_model& m) {
  using models::hf_family;
  const auto& d = m.description;
  const std::string model = m.entry.name;
  const bool llama = d.family == hf_family::decoder || d.family == hf_family::mixtral;
  if (a.has("serve") && d.family == hf_family::bert)
    throw cli::usage_error("--serve budgets generate()'s KV cache; " + model + " is an encoder (BERT has no generate()): budget it with --inference");
  if (a.has("serve") && !llama)
    throw cli::usage_error("--serve with --hf-config of model_type " + m.model_type +
                           ": the serving model (KV cache, paged blocks) is the Llama family's and Mixtral's (llama, mistral, qwen2, qwen3, gemma, phi3, mixtral config.json)");
  // GPT-2's causal LM, BERT's classifier, T5; GPT-2's and BERT's other heads by module name (hf_config.hpp)
  const bool peft = m.entry.peft.has_value() || static_cast<bool>(m.entry.lora_by_name);
  const bool with_task = d.family == hf_family::gpt2 || d.family == hf_family::bert;
  if (a.has("lora") && !llama && !peft)
    throw cli::usage_error("--lora with --hf-config of model_type " + m.model_type + (with_task ? " and --task " + std::string(models::hf_task_name(d.task)) : "") +
                           ": PEFT's LoRA is modelled on the Llama family and Mixtral (llama, mistral, qwen2, qwen3, gemma, phi3, mixtral config.json), "
                           "GPT-2, BERT and T5 (gpt2, bert, t5 config.json)");
  // --lora builds on a causal LM or a classifier (PEFT's CAUSAL_LM or SEQ_CLS task type)
  if (a.has("serve") && d.task != models::hf_task::causal_lm)
    throw cli::usage_error("--serve with --task " + std::string(models::hf_task_name(d.task)) + ": a classification head has no generate() (serving needs --task causal-lm)");
  if (a.has("lora") && !peft && d.task != models::hf_task::causal_lm && d.task != models::hf_task::seq_cls)
    throw cli::usage_error("--lora with --task " + std::string(models::hf_task_name(d.task)) +
                           ": PEFT's LoRA is modelled on the causal LM (TaskType.CAUSAL_LM) and the classifier (SEQ_CLS): use --task causal-lm or seq-cls");
}

/// The model of a config.json (kept alive for the run): --hf-config FILE with --task, or a
/// --teacher FILE (its head from "architectures"). Its torch_dtype is shown in the name (and
/// stored in `torch_dtype`), not applied: the weights' type is what --precision (and
/// --no-master-weights, --lora base=) say; the CLI notes where transformers would load it otherwise
/// (loaded_dtype_note).
inline const zoo_entry* load_hf_entry(const std::string& flag, const std::string& path, std::optional<models::hf_task> task,
                                      const cli::parsed_args* checked, std::string* torch_dtype = nullptr) {
  static std::deque<hf_model> kept;
  try {
    kept.push_back(from_hf_config(path, task));
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what(), own = "--hf-config: ";  // the flag that named the file
    throw cli::usage_error(flag + ": " + (what.rfind(own, 0) == 0 ? what.substr(own.size()) : what));
  }
  if (checked) check_hf_flags(*checked, kept.back());
  auto& e = kept.back().entry;
  e.name += kept.back().torch_dtype.empty() ? "" : " (torch_dtype " + kept.back().torch_dtype + ")";
  if (torch_dtype) *torch_dtype = kept.back().torch_dtype;
  return &e;
}

/// transformers >= 5 loads a config's weights in its torch_dtype: from_pretrained's default dtype
/// is "auto" (huggingface/transformers PR #42805, "Default auto", 2025-12-11) and from_config keeps
/// config.torch_dtype (issue #36567; this repository's transformers-graphs/tinyllama-sdpa.json
/// runs SDPA in bfloat16). A budget whose trainable weights are fp32 then describes a model loaded
/// with dtype=torch.float32: a note under the markdown tables says so and how to budget the
/// default load (stderr stays empty on success).
inline std::string loaded_dtype_note(const std::string& torch_dtype, const training& plan, bool lora) {
  if (torch_dtype != "bfloat16" && torch_dtype != "float16") return {};
  if (types_of(plan.precision).pure16 || lora) return {};  // 16-bit weights already, or PEFT's base= says
  const std::string t = torch_dtype == "bfloat16" ? "bf16" : "fp16";
  return "\nNote: transformers >= 5 loads this config's weights as " + torch_dtype +
         " (from_pretrained's default dtype is \"auto\"); this budget's are fp32, as from_pretrained(..., dtype=torch.float32) loads them. "
         "Trained in their own " + t + " weights: --precision " + t + " --no-master-weights.\n";
}

/// A Gemma 2 config budgeted with SDPA (transformers 5's default for it) trains, in practice, as its
/// users are told to: Gemma2ForCausalLM warns that training is "strongly recommended" with eager
/// attention, which keeps every layer's soft-capped scores (op_rules.md L26). A note under the
/// tables says how to budget that.
inline std::string gemma2_attention_note(const std::optional<models::llama_config>& g) {
  if (!g || !g->gemma2 || g->eager_attention || g->kernel_window) return {};
  return "\nNote: Gemma 2 is budgeted with SDPA, the attention transformers 5 gives it; its training warning recommends "
         "attn_implementation \"eager\", whose soft-capped scores every layer keeps: to budget that, give --hf-config a config.json "
         "with \"attn_implementation\": \"eager\".\n";
}

/// Does a --teacher value name a config.json (rather than a zoo model)?
inline bool names_a_config(const std::string& s) { return s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0; }

}  // namespace gpubudget::tools
