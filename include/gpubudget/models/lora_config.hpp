// gpubudget/models/lora_config.hpp — PEFT's LoraConfig as far as memory is concerned, shared by
// the transformer families' LoRA builders (models/transformers.hpp) and get_peft_model on any
// model (models/peft.hpp), which the families' builders call.
#pragma once
#include <cstddef>
#include <cstdint>

#include <gpubudget/gpubudget.hpp>

namespace gpubudget::models {

/// A PEFT LoraConfig as far as memory is concerned (lora_alpha only scales: no bytes).
struct lora_config {
  std::int64_t rank = 8;
  std::int64_t targets = q_proj | v_proj;  ///< lora_target bits; parse_lora_targets("q_proj,v_proj")
  std::int64_t dropout_percent = 0;        ///< lora_dropout · 100 (PEFT's default 0.0)
  base_weights base = base_weights::same;  ///< storage of the frozen base model (nf4_dq: QLoRA)
  bool dora = false;                       ///< use_dora: DoRA's magnitude vectors (layers/adapters.hpp dora_output)
  /// PEFT >= 0.15 casts the adapters' input to their type (_cast_input_dtype); false: an older
  /// PEFT forward without it (the CPU references' lora_llama_probe.py LoraLinear)
  bool cast_input = true;
  /// LoraConfig.modules_to_save: lm_head and embed_tokens trained whole (save_lm_head |
  /// save_embed_tokens), each a trainable copy beside its frozen original (layers/adapters.hpp).
  std::int64_t modules_to_save = 0;
  /// > 0: the sequence-classification head of `labels` classes (LlamaForSequenceClassification's
  /// score) instead of lm_head; PEFT's TaskType.SEQ_CLS puts `score` in modules_to_save itself
  /// (PeftModelForSequenceClassification: classifier_module_names = ["classifier", "score"]).
  std::int64_t labels = 0;
  /// PEFT's prepare_model_for_kbit_training on a quantized base (peft/utils/other.py): every
  /// 16-bit parameter bitsandbytes left unquantized (embedding, norms, lm_head) cast to fp32, and
  /// enable_input_require_grads (the embedding's output requires grad). With fp32 norms the
  /// residual stream is fp32, and bitsandbytes' Linear4bit casts its input to the compute dtype
  /// and its output back to the input's (`.to(inp_dtype)`). Its use_gradient_checkpointing=True
  /// is the plan's checkpoint_blocks (the CLI's prepare_kbit=true sets it).
  bool kbit_prepared = false;
};
/// The storage of the modules bitsandbytes does not quantize (embedding, norms, LM head): the
/// base's 16-bit type, fp32 after prepare_model_for_kbit_training.
constexpr base_weights unquantized_modules(const lora_config& l) {
  return l.kbit_prepared ? base_weights::fp32 : is_quantized(l.base) ? base_weights::half : l.base;
}
/// lora_config::modules_to_save bits.
enum saved_module : std::int64_t { save_lm_head = 1, save_embed_tokens = 2 };

namespace detail {
/// Record `r`'s op replaced by `with`'s (its name, flags, sharing and place stay).
constexpr void replace_op(layer& r, const layer& with) {
  r.op = with.op;
  for (std::size_t i = 0; i < max_op_fields; ++i) r.fields[i] = with.fields[i];
}
}  // namespace detail

}  // namespace gpubudget::models
