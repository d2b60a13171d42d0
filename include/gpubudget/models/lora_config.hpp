// gpubudget/models/lora_config.hpp — PEFT's LoraConfig as far as memory is concerned, shared by
// the transformer families' LoRA builders (models/transformers.hpp) and get_peft_model on any
// model (models/peft.hpp), which the families' builders call.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include <gpubudget/gpubudget.hpp>

namespace gpubudget::models {

namespace detail {
[[noreturn]] inline void layers_to_transform_index_out_of_range() {
  gpubudget::detail::fail("gpubudget: lora_config::layers_to_transform: a layer index is negative or past 127 (the most layers a layer_set holds)");
}
[[noreturn]] inline void layers_to_transform_list_is_empty() {
  gpubudget::detail::fail("gpubudget: lora_config::layers_to_transform: an empty list of layers (PEFT reads [] as None, every layer: leave "
                          "layers_to_transform at its default for that)");
}
}  // namespace detail

/// PEFT's LoraConfig.layers_to_transform: the indices of the decoder layers that take adapters
/// (the N of `model.layers.N`). Empty, the default: every layer (PEFT's None). Indices 0 to 127.
///   lora_config{.rank = 8, .layers_to_transform = {0, 1, 2, 3}}           // layers_to_transform=[0, 1, 2, 3]
///   lora_config{.rank = 8, .layers_to_transform = layer_set::range(28, 32)} // list(range(28, 32))
struct layer_set {
  static constexpr std::int64_t capacity = 128;
  std::uint64_t bits[2] = {};

  constexpr layer_set() = default;
  /// The layers listed (PEFT's list; a repeated index counts once, as `in` reads it).
  constexpr layer_set(std::initializer_list<std::int64_t> indices) {
    if (indices.size() == 0) detail::layers_to_transform_list_is_empty();
    for (const auto i : indices) add(i);
  }
  /// Layers first, ..., end - 1 (Python's range(first, end)).
  static constexpr layer_set range(std::int64_t first, std::int64_t end) {
    if (end <= first) detail::layers_to_transform_list_is_empty();
    layer_set s;
    for (auto i = first; i < end; ++i) s.add(i);
    return s;
  }
  constexpr void add(std::int64_t i) {
    if (i < 0 || i >= capacity) detail::layers_to_transform_index_out_of_range();
    bits[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  constexpr bool contains(std::int64_t i) const { return i >= 0 && i < capacity && ((bits[i / 64] >> (i % 64)) & 1) != 0; }
  /// No index given: every layer.
  constexpr bool all() const { return bits[0] == 0 && bits[1] == 0; }
  /// Does layer `i` of a model take adapters?
  constexpr bool adapts(std::int64_t i) const { return all() || contains(i); }
  /// The highest index given (-1: none).
  constexpr std::int64_t last() const {
    for (auto i = capacity - 1; i >= 0; --i)
      if (contains(i)) return i;
    return -1;
  }
  /// How many runs of consecutive adapted or plain layers a model of `layers` layers has.
  constexpr std::int64_t runs_in(std::int64_t layers) const {
    std::int64_t runs = 0;
    for (std::int64_t i = 0; i < layers; ++i) runs += i == 0 || adapts(i) != adapts(i - 1) ? 1 : 0;
    return runs;
  }
  /// How many of a model's `layers` layers take adapters.
  constexpr std::int64_t adapted_of(std::int64_t layers) const {
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < layers; ++i) n += adapts(i) ? 1 : 0;
    return n;
  }
};

/// PEFT's LoraConfig.bias: the biases that train beside the adapters (BaseTuner's
/// _mark_only_adapters_as_trainable, huggingface/peft 5d602fdb src/peft/tuners/tuners_utils.py:513-527: "all" sets requires_grad on
/// every parameter named `bias`, "lora_only" on the bias of each LoRA layer's base). On a model
/// without biases both change nothing, as in PEFT (no error).
enum class peft_bias : std::uint8_t { none, all, lora_only };

/// A PEFT LoraConfig as far as memory is concerned (lora_alpha only scales: no bytes).
struct lora_config {
  std::int64_t rank = 8;
  std::int64_t targets = q_proj | v_proj;  ///< lora_target bits; parse_lora_targets("q_proj,v_proj")
  std::int64_t dropout_percent = 0;        ///< lora_dropout · 100 (PEFT's default 0.0)
  base_weights base = base_weights::same;  ///< storage of the frozen base model (nf4_dq: QLoRA)
  bool dora = false;                       ///< use_dora: DoRA's magnitude vectors (layers/lora_projection.hpp dora_output)
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
  /// PEFT's layers_to_transform: the decoder layers with adapters (models::layer_set; default:
  /// all). Modelled on the Llama family (llama_lora, phi3_lora, mixtral_lora): the other layers
  /// stay plain frozen layers. PEFT matches it only inside a numbered layer list (huggingface/peft
  /// 5d602fdb, src/peft/tuners/tuners_utils.py:2337-2362, check_target_module_exists: the first
  /// `NAME.<index>.` of a module's path, `[]` read as None), so embed_tokens is no target with it,
  /// and a str target_modules ("all-linear") is PEFT's ValueError (tuners/lora/config.py:1020).
  layer_set layers_to_transform{};
  /// PEFT's layers_pattern: the name of the layer list layers_to_transform numbers (nullptr: any,
  /// the first numbered component). The Llama family's is "layers" (`model.layers.N`).
  const char* layers_pattern = nullptr;
  /// PEFT's bias: the biases that train (gradients, optimizer state, trainable count). Modelled on
  /// the Llama family, whose only biases are Qwen2's q, k, v ones (llama_config::qkv_bias).
  peft_bias bias = peft_bias::none;
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
