// tools/llm_cli.hpp — the CLI's LoRA and serving flags (issue D), kept apart from estimate.cpp:
//
//   gpubudget llama-2-7b --lora r=8,targets=q_proj,v_proj --seq 2048 --precision amp_bf16 --device l4
//   gpubudget llama-3-8b --serve --context 4096 --concurrency 8 --kv-dtype fp8 --devices l4,a100_80gb
//
// --lora  r=N[,targets=NAME,...][,dropout=P][,base=fp32|fp16|bf16][,dora=true][,rslora=true][,modules_to_save=NAME,...][,prepare_kbit=true]
//         [,layers=A-B,...][,layers_pattern=layers][,bias=none|all|lora_only]:
//         PEFT LoRA (DoRA; rsLoRA only scales, no bytes; modules_to_save: lm_head, embed_tokens
//         trained whole, in the base's type) on a causal LM or a classifier (--task seq-cls) of the Llama family,
//         Phi-3 (qkv_proj, o_proj, gate_up_proj, down_proj) and Mixtral (attention; its experts'
//         w1, w2, w3 and router gate are counted, not simulated)
//         (targets default q_proj,v_proj, PEFT's default for Llama; "all-linear"; dropout a
//         probability 0..1; base: the frozen weights' storage, default the --precision's parameter type;
//         layers: PEFT's layers_to_transform, indices and inclusive ranges of the decoder layers with adapters;
//         bias: PEFT's trainable biases, Qwen2's q, k, v ones).
// --quant  nf4|nf4-dq|fp4|int8: with --lora the frozen base, with --serve the decoder layers' weights.
// --serve an inference budget with a KV cache (serving.hpp); --context N tokens per sequence
//         (default: the model's positions; beyond them only with --ctx raised explicitly),
//         --concurrency N sequences (default 1), --kv-dtype fp8|fp16|bf16 (default: the
//         precision's: bf16 for bf16/amp_bf16, fp16 for fp16/amp_fp16, fp32 for fp32).
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gpubudget/serving.hpp>

#include "cli_args.hpp"
#include "zoo_registry.hpp"

namespace gpubudget::tools {

/// The flags (appended to the CLI's options).
inline std::vector<cli::option_spec> llm_options() {
  return {
      {"lora", true, "r=N,targets=A,B", "LoRA adapters (Llama family, Phi-3, Mixtral, GPT-2): r=rank, targets= PEFT target_modules (default q_proj,v_proj; all-linear; embed_tokens (lora.Embedding on the token table); Phi-3: qkv_proj, gate_up_proj; GPT-2: c_attn (its default), c_proj, c_fc; BERT (--task seq-cls): query, value (its default), key, dense; T5: q, v (its default), k, o, wi, wo; any other model, torchvision's or --graph: targets= its nn.Linear, nn.Conv, nn.Embedding and nn.MultiheadAttention modules by PyTorch path or its end, no default), dropout=P, base=fp32|fp16|bf16, dora=true (PEFT use_dora), rslora=true (use_rslora: scaling only, no bytes), modules_to_save=lm_head,embed_tokens (trained whole, in the base's type; a --task seq-cls head's score always), prepare_kbit=true (with --quant: PEFT's prepare_model_for_kbit_training: embedding, norms and head in fp32, an fp32 residual stream, gradient checkpointing of every decoder layer), layers=0-3,8 (PEFT's layers_to_transform: adapters on those decoder layers only; Llama family, Phi-3, Mixtral; not with all-linear or embed_tokens), layers_pattern=layers, bias=all|lora_only (PEFT's bias: every bias trains, or those of the adapted modules; Qwen2's q, k, v biases; none on the Llama family's other models)"},
      {"quant", true, "Q", "with --lora or --serve: the (frozen) weights quantized (bitsandbytes): nf4 | nf4-dq (double quantization, QLoRA) | fp4 | int8"},
      {"padded-batch", false, "",
       "Llama family, BERT, GPT-2 (--hf-config) and T5: the batch is padded (a collator pads the shorter sequences; the model gets an attention_mask "
       "with zeros): every layer's SDPA gets a [B, 1, T, T] mask, (Llama family) k and v repeated to every head, and on CUDA no flash kernel "
       "(default: unpadded, transformers skips the mask; eager attention, as T5's and the zoo's bert-base, adds its mask padded or not)"},
      {"attention-mask", false, "",
       "the model is called with an attention_mask that pads nothing (a collator's or a tokenizer's output passed whole): a Llama-family "
       "model's sliding-window masks are then one per sample, [B, 1, T, T] (default: no attention_mask; --padded-batch implies one)"},
      {"serve", false, "", "a serving budget (Llama family): weights, prefill workspace, KV cache; max tokens / sequences / context"},
      {"context", true, "N", "with --serve: tokens per sequence (default: the model's positions; more needs --ctx)"},
      {"concurrency", true, "N", "with --serve: sequences served at once, 1 to 1048576 (default 1)"},
      {"kv-dtype", true, "T", "with --serve: KV cache type fp8 | fp16 | bf16 (default: the precision's)"},
      {"engine", true, "E", "with --serve: vllm (a server: paged KV blocks, gpu_memory_utilization 0.9; default) | hf (transformers' generate(): the prompts prefilled together, a DynamicCache)"},
      {"new-tokens", true, "N", "with --serve --engine hf: tokens generate() adds per sequence (the prompt is --context minus them)"},
  };
}

/// The Llama-family configuration a zoo entry stands for, with the size options applied.
/// The dense Llama-family configuration `e` was built from (a zoo name or a --hf-config), with
/// the command line's size options applied; nullopt for other models and for Mixtral.
inline std::optional<models::llama_config> llama_config_of(const zoo_entry& e, const model_options& o) {
  if (!e.llama || e.experts) return std::nullopt;
  auto g = detail::llama_from(*e.llama, o);
  if (g.sliding_window > g.context) g.sliding_window = g.context;  // a shorter --ctx bounds the window too
  return g;
}

/// The Mixtral configuration of a mixture-of-experts entry (nullopt for dense models).
inline std::optional<models::llama_config> mixtral_config_of(const zoo_entry& e, const model_options& o) {
  if (!e.llama || !e.experts) return std::nullopt;
  return detail::llama_from(*e.llama, o);
}
inline std::optional<models::moe_config> experts_of(const zoo_entry& e, const model_options& o) {
  return e.experts ? std::optional(detail::moe_from(o, *e.experts)) : std::nullopt;
}
inline std::optional<models::moe_counts> moe_counts_of(const zoo_entry& e, const model_options& o) {
  const auto g = mixtral_config_of(e, o);
  return g ? std::optional<models::moe_counts>(models::mixtral_parameter_counts(*g, *experts_of(e, o))) : std::nullopt;
}

/// `modules_to_save=lm_head,embed_tokens` of --lora: lora_config::modules_to_save bits.
inline std::int64_t parse_modules_to_save(const std::string& list) {
  std::int64_t bits = 0;
  for (const auto& name : cli::split_list("--lora modules_to_save", list)) {
    const std::int64_t bit = name == "lm_head" ? models::save_lm_head : name == "embed_tokens" ? models::save_embed_tokens : std::int64_t{0};
    if (bit == 0)
      throw cli::usage_error("--lora: modules_to_save names '" + name + "'; modelled: lm_head, embed_tokens (a --task seq-cls head's score is in it already)" +
                             cli::did_you_mean(name, {"lm_head", "embed_tokens"}));
    if (bits & bit) throw cli::usage_error("--lora: modules_to_save names " + name + " twice");
    bits |= bit;
  }
  return bits;
}

/// `layers=0-3,8` of --lora: PEFT's layers_to_transform, each item a layer index or an inclusive
/// range A-B.
inline models::layer_set parse_lora_layers(const std::string& list) {
  models::layer_set set;
  const auto last = models::layer_set::capacity - 1;
  for (const auto& item : cli::split_list("--lora layers", list)) {
    const auto dash = item.find('-', 1);
    const auto first = cli::parse_integer("--lora layers", item.substr(0, dash), 0, last);
    const auto end = dash == std::string::npos ? first : cli::parse_integer("--lora layers", item.substr(dash + 1), 0, last);
    if (end < first) throw cli::usage_error("--lora layers: range " + item + " ends before it starts (A-B: layers A to B, both included)");
    for (auto i = first; i <= end; ++i) set.add(i);
  }
  return set;
}

/// The lists `--lora` items without '=' continue: targets, modules_to_save, layers.
struct lora_lists {
  std::string targets, saved, layers;
};

inline const std::vector<std::string>& lora_keys() {
  static const std::vector<std::string> keys = {"r",    "targets",         "dropout",      "base",   "dora",          "rslora",
                                                "modules_to_save", "prepare_kbit", "layers", "layers_pattern", "bias"};
  return keys;
}
inline const char* const lora_keys_help =
    "r=N, targets=NAME,..., dropout=P, base=T, dora=true, rslora=true, modules_to_save=NAME,..., prepare_kbit=true, layers=A-B,..., layers_pattern=NAME, "
    "bias=none|all|lora_only";

/// `list`, continued by `value`.
inline void continue_list(std::string& list, const std::string& value) { list += (list.empty() ? "" : ",") + value; }

/// One `key=value` of --lora (or one more item of a list) into `l` and `lists`.
inline void apply_lora_key(models::lora_config& l, lora_lists& lists, const std::string& key, const std::string& value, std::int64_t width) {
  if (key == "r") l.rank = cli::parse_integer("--lora r", value, 1, width);
  else if (key == "dropout") l.dropout_percent = static_cast<std::int64_t>(cli::parse_number("--lora dropout", value, 0.0, 1.0) * 100 + 0.5);
  else if (key == "dora") l.dora = cli::parse_choice("--lora dora", value, {"true", "false"}) == "true";
  // PEFT's prepare_model_for_kbit_training before get_peft_model (lora_config::kbit_prepared)
  else if (key == "prepare_kbit") l.kbit_prepared = cli::parse_choice("--lora prepare_kbit", value, {"true", "false"}) == "true";
  // use_rslora scales the update by lora_alpha / sqrt(r) instead of / r: no bytes (checked, then taken)
  else if (key == "rslora") cli::parse_choice("--lora rslora", value, {"true", "false"});
  else if (key == "base") {
    const auto b = cli::parse_choice("--lora base", value, {"fp32", "fp16", "bf16"});
    l.base = b == "fp32" ? base_weights::fp32 : b == "fp16" ? base_weights::fp16 : base_weights::bf16;
  }
  // the Llama family's layer list is model.layers; PEFT finds no target under another name
  else if (key == "layers_pattern") cli::parse_choice("--lora layers_pattern", value, {"layers"}), l.layers_pattern = "layers";
  // PEFT's LoraConfig.bias: the biases that train beside the adapters
  else if (key == "bias") {
    const auto b = cli::parse_choice("--lora bias", value, {"none", "all", "lora_only"});
    l.bias = b == "all" ? models::peft_bias::all : b == "lora_only" ? models::peft_bias::lora_only : models::peft_bias::none;
  } else if (key == "layers") {
    if (value.empty()) throw cli::usage_error("--lora: layers= lists no layer (e.g. layers=0-3; PEFT reads an empty list as every layer: leave layers= out)");
    continue_list(lists.layers, value);
  } else if (key == "modules_to_save") continue_list(lists.saved, value);
  else continue_list(lists.targets, value);
}

/// The checks that need every key: a rank, layers_pattern with layers, layers without all-linear.
inline void check_lora_keys(models::lora_config& l, const lora_lists& lists, const std::set<std::string>& seen) {
  if (!lists.saved.empty()) l.modules_to_save = parse_modules_to_save(lists.saved);
  if (!seen.count("r")) throw cli::usage_error("--lora: no rank (r=N, e.g. --lora r=8,targets=q_proj,v_proj)");
  if (seen.count("layers_pattern") && lists.layers.empty())
    throw cli::usage_error("--lora: layers_pattern= names the layer list that layers= numbers: give layers= too (PEFT's ValueError)");
  if (lists.layers.empty()) return;
  l.layers_to_transform = parse_lora_layers(lists.layers);
  // LoraConfig: "`layers_to_transform` cannot be used when `target_modules` is a str."
  if (lists.targets.find("all-linear") != std::string::npos || lists.targets.find("all_linear") != std::string::npos)
    throw cli::usage_error("--lora: layers= does not combine with targets=all-linear (PEFT: \"layers_to_transform cannot be used when target_modules "
                           "is a str\"): list the modules");
}

/// `--lora r=8,targets=q_proj,v_proj,dropout=0.05,dora=true,modules_to_save=lm_head,layers=0-3`: a
/// key=value list in which items without '=' continue the targets, modules_to_save or layers list.
/// With `names`, targets= is returned there as given (PEFT's target_modules of any model,
/// models::get_peft_model) instead of being read as a transformers family's module names.
inline models::lora_config parse_lora(const std::string& text, std::int64_t width, const std::string& default_targets = "q_proj,v_proj",
                                      std::string* names = nullptr) {
  models::lora_config l{0, 0, 0, base_weights::same};
  lora_lists lists;
  std::set<std::string> seen;
  std::string key;
  for (const auto& item : cli::split_list("--lora", text)) {
    const auto eq = item.find('=');
    std::string value = item;
    if (eq != std::string::npos) {
      key = item.substr(0, eq);
      value = item.substr(eq + 1);
      const auto& keys = lora_keys();
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        throw cli::usage_error("--lora: unknown key '" + key + "' (" + lora_keys_help + ")" + cli::did_you_mean(key, keys));
      if (!seen.insert(key).second) throw cli::usage_error("--lora: " + key + "= is given twice");
    } else if (key != "targets" && key != "modules_to_save" && key != "layers") {
      throw cli::usage_error("--lora: '" + item + "' is not key=value (" + lora_keys_help + ")");
    }
    apply_lora_key(l, lists, key, value, width);
  }
  check_lora_keys(l, lists, seen);
  if (names) {
    *names = lists.targets;
    return l;
  }
  try {
    l.targets = parse_lora_targets(lists.targets.empty() ? default_targets : lists.targets);
  } catch (const std::invalid_argument&) {
    throw cli::usage_error("--lora: unknown target module in '" + lists.targets +
                           "' (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, all-linear; Phi-3: qkv_proj, gate_up_proj; Mixtral: w1, w2, w3, gate; GPT-2: c_attn, c_proj, c_fc; BERT: query, key, value, dense; T5: q, k, v, o, wi, wo)");
  }
  return l;
}

/// PEFT's prepare_model_for_kbit_training (lora_config::kbit_prepared) on `plan`: a quantized base
/// is required, and its use_gradient_checkpointing=True (the default) checkpoints every decoder layer.
inline void apply_kbit_preparation(const models::lora_config& l, training& plan) {
  if (!l.kbit_prepared) return;
  if (!is_quantized(l.base))
    throw cli::usage_error("--lora prepare_kbit=true prepares a quantized model (prepare_model_for_kbit_training): add --quant nf4|nf4-dq|fp4|int8");
  plan.checkpoint_blocks = true;
}

/// `--quant Q`: bitsandbytes' storage of the frozen weights (`same` without the flag).
inline base_weights parse_quant(const cli::parsed_args& a) {
  if (!a.has("quant")) return base_weights::same;
  const auto q = cli::parse_choice("--quant", *a.get("quant"), {"nf4", "nf4-dq", "fp4", "int8"});
  return q == "nf4" ? base_weights::nf4 : q == "nf4-dq" ? base_weights::nf4_dq : q == "fp4" ? base_weights::fp4 : base_weights::int8;
}

/// layers= of --lora on `base` (a Llama-family decoder `g`): every index one of its layers, and no
/// target PEFT would then leave out (embed_tokens, which has no layer index).
inline void check_lora_layers(const zoo_entry& base, const models::llama_config& g, const models::lora_config& l) {
  if (l.layers_to_transform.all()) return;
  if (l.layers_to_transform.last() >= g.layers)
    throw cli::usage_error("--lora: layers= names layer " + std::to_string(l.layers_to_transform.last()) + "; " + base.name + " has layers 0 to " +
                           std::to_string(g.layers - 1) + " (PEFT would adapt nothing there)");
  if (l.layers_to_transform.runs_in(g.layers) > models::detail::max_layer_runs)
    throw cli::usage_error("--lora: layers= makes more than " + std::to_string(models::detail::max_layer_runs) +
                           " runs of consecutive adapted and plain layers on " + base.name + " (4 separate ranges of adapted layers); not modelled");
  if (l.targets & embed_tokens)
    throw cli::usage_error("--lora: layers= with targets=embed_tokens: PEFT matches layers_to_transform inside the numbered layers only, so "
                           "model.embed_tokens would get no adapter; drop it from targets=");
}
/// layers= and bias= of --lora on a model where they are not modelled (GPT-2, BERT, T5, by name).
inline void refuse_llama_only_options(const zoo_entry& base, const models::lora_config& l) {
  if (!l.layers_to_transform.all() || l.layers_pattern)
    throw cli::usage_error("--lora: layers= (PEFT's layers_to_transform) is modelled on the Llama family, Phi-3 and Mixtral, not on " + base.name);
  if (l.bias != models::peft_bias::none)
    throw cli::usage_error("--lora: bias=all|lora_only (PEFT's trainable biases) is modelled on the Llama family, Phi-3 and Mixtral, not on " + base.name);
}

/// A LoRA fine-tune of a zoo model: the entry that budgets it and PEFT's counts.
struct lora_run {
  zoo_entry entry;
  models::parameter_counts counts;
};

/// The LoRA'd model of `base` (configuration `g`; `mixtral`: a Mixtral decoder's experts) under `l`, with
/// PEFT's module names of that model: Phi-3's qkv_proj and gate_up_proj ("all-linear": its four
/// modules; Qwen2's and Gemma's are Llama's), Mixtral's attention adapted (all-linear: the attention in transformers 5; w1, w2,
/// w3, gate name nothing there; on 4.x's expert modules their adapters are counted in the message, not simulated). A usage error for a name the model lacks.
inline lora_run lora_model(const zoo_entry& base, const models::llama_config& g, const std::optional<models::moe_config>& mixtral, models::lora_config l) {
  const std::int64_t separate = q_proj | k_proj | v_proj | gate_proj | up_proj, fused = qkv_proj | gate_up_proj,
                     moe = w1 | w2 | w3 | router_gate;
  const auto lacks = [&](const std::string& names) { return cli::usage_error("--lora: " + base.name + " has no module " + names); };
  // the adapted model is still the base's decoder: its configuration (and experts) travel along;
  // a LoRA setting the library refuses is --lora's error, not one of the model's sizes
  const auto adapted = [&](std::function<evaluation(const model_options&, const training&, const device&)> run) {
    auto guarded = [run = std::move(run), name = base.name](const model_options& o, const training& t, const device& d) {
      try {
        return run(o, t, d);
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what(), prefix = "gpubudget: ";
        if (what.find("LoRA") == std::string::npos && what.find("DoRA") == std::string::npos && what.find("embed_tokens") == std::string::npos) throw;
        throw cli::usage_error("--lora on " + name + ": " + (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
      }
    };
    return zoo_entry{base.name, base.family, std::move(guarded), {}, base.llama, base.experts, base.labels};
  };
  l.labels = base.labels;  // a classifier: PEFT's SEQ_CLS, score in modules_to_save
  check_lora_layers(base, g, l);
  if (l.labels > 0 && (l.modules_to_save & models::save_lm_head))
    throw cli::usage_error("--lora: modules_to_save=lm_head on " + base.name + ", a classifier: it has no lm_head (its score head is in modules_to_save already)");
  if ((l.targets & (gpt2_lora_modules | bert_lora_modules | t5_lora_modules)) != 0)
    throw lacks("c_attn, c_proj or c_fc (GPT-2's), query, key, value or dense (BERT's), q, k, v, o, wi or wo (T5's)");
  if (mixtral) {
    const bool transformers5 = mixtral->impl == moe_impl::grouped_mm;  // MixtralExperts' 3-D parameters
    // PEFT's all-linear: the nn.Linear modules — attention alone in transformers 5, experts and router too in 4.x
    if (l.targets == all_linear) l.targets = models::mixtral_lora_targets(*mixtral, l).targets;
    if ((l.targets & (gate_proj | up_proj | down_proj | fused)) != 0) throw lacks("gate_proj, up_proj, down_proj, qkv_proj or gate_up_proj (experts: w1, w2, w3)");
    if (transformers5 && (l.targets & moe) != 0)
      throw cli::usage_error("--lora: transformers 5's Mixtral has no w1, w2, w3 or gate modules (MixtralExperts holds 3-D gate_up_proj and down_proj "
                             "parameters, MixtralTopKRouter a weight, which PEFT adapts through target_parameters: not modelled); adapt q_proj, "
                             "k_proj, v_proj, o_proj (what all-linear adapts there)");
    if ((l.targets & moe) != 0)
      throw cli::usage_error("--lora: adapters on Mixtral's experts or router (w1, w2, w3, gate) are not simulated (PEFT's count: " +
                             std::to_string(models::mixtral_lora_counts(g, *mixtral, l).trainable) + " trainable parameters); adapt q_proj, k_proj, v_proj, o_proj");
    if (l.base != base_weights::same) throw cli::usage_error("--lora on Mixtral: the frozen experts are modelled in the --precision's type (no base= or --quant)");
    return {adapted([g, m = *mixtral, l](const model_options&, const training& t, const device& d) {
              return l.labels > 0 ? evaluate(models::mixtral_lora_seq_cls(g, m, l), t, d) : evaluate(models::mixtral_lora(g, m, l), t, d);
            }),
            models::mixtral_lora_counts(g, *mixtral, l)};
  }
  if ((l.targets & moe) != 0) throw lacks("w1, w2, w3 or gate (Mixtral's experts and router)");
  if (g.fused_projections) {
    if (l.targets == all_linear) l.targets = fused_all_linear;
    if ((l.targets & separate) != 0) throw lacks("q_proj, k_proj, v_proj, gate_proj or up_proj (Phi-3 fuses them: qkv_proj, gate_up_proj)");
    return {adapted([g, l](const model_options&, const training& t, const device& d) {
              return l.labels > 0 ? evaluate(models::phi3_lora_seq_cls(g, l), t, d) : evaluate(models::phi3_lora(g, l), t, d);
            }),
            models::lora_counts(g, l)};
  }
  if ((l.targets & fused) != 0) throw lacks("qkv_proj or gate_up_proj (Phi-3's fused projections)");
  if (g.olmo3) {
    if (l.labels > 0) throw cli::usage_error("--lora on " + base.name + ": OLMo 3's head here is causal-lm (Olmo3ForCausalLM)");
    return {adapted([g, l](const model_options&, const training& t, const device& d) {
              return models::visit_olmo3_lora(g, l, [&](const auto& m) { return evaluate(m, t, d); });
            }),
            models::lora_counts(g, l)};
  }
  if (g.granite) {
    if (l.labels > 0) throw cli::usage_error("--lora on " + base.name + ": Granite's head here is causal-lm (GraniteForCausalLM)");
    return {adapted([g, l](const model_options&, const training& t, const device& d) { return evaluate(models::granite_lora(g, l), t, d); }),
            models::lora_counts(g, l)};
  }
  if (g.olmo2) {
    if (l.labels > 0) throw cli::usage_error("--lora on " + base.name + ": OLMo 2's head here is causal-lm (Olmo2ForCausalLM)");
    return {adapted([g, l](const model_options&, const training& t, const device& d) { return evaluate(models::olmo2_lora(g, l), t, d); }),
            models::lora_counts(g, l)};
  }
  if (g.gemma2) {
    if (l.labels > 0) throw cli::usage_error("--lora on " + base.name + ": Gemma 2's head here is causal-lm (Gemma2ForCausalLM)");
    return {adapted([g, l](const model_options&, const training& t, const device& d) {
              return models::visit_gemma2_lora(g, l, [&](const auto& m) { return evaluate(m, t, d); });
            }),
            models::lora_counts(g, l)};
  }
  if (g.gemma3) {
    if (l.labels > 0) throw cli::usage_error("--lora on " + base.name + ": Gemma 3's head here is causal-lm (Gemma3ForCausalLM)");
    return {adapted([g, l](const model_options&, const training& t, const device& d) {
              return models::visit_gemma3_lora(g, l, [&](const auto& m) { return evaluate(m, t, d); });
            }),
            models::lora_counts(g, l)};
  }
  return {adapted([g, l](const model_options&, const training& t, const device& d) {
            return l.labels > 0 ? evaluate(models::llama_lora_seq_cls(g, l), t, d) : evaluate(models::llama_lora(g, l), t, d);
          }),
          models::lora_counts(g, l)};
}

/// The LoRA'd model of `base` (GPT-2, BERT's classifier, T5: base.peft) under `l`, the size
/// options `o` applied; PEFT's default targets there are the family's (parse_lora). A usage error
/// for a name the family lacks or a base it does not model.
inline lora_run peft_family_model(const zoo_entry& base, const model_options& o, models::lora_config l) {
  const auto& f = *base.peft;
  refuse_llama_only_options(base, l);
  if (l.targets == all_linear) l.targets = f.modules;  // PEFT's all-linear on the family's Linear (Conv1D) modules
  if ((l.targets & ~f.modules) != 0)
    throw cli::usage_error("--lora: " + base.name + " has no module of that name in targets= (" + f.family + "'s: " + f.module_names + ", all-linear)");
  if (l.base != base_weights::same || l.modules_to_save != 0 || l.kbit_prepared)
    throw cli::usage_error("--lora on " + base.name + ": its frozen base is modelled in the --precision's type (no base=, --quant, modules_to_save= or prepare_kbit=" +
                           (base.labels > 0 ? "; the classifier is in modules_to_save already)" : ")"));
  l.labels = base.labels;  // BERT's classifier: PEFT's SEQ_CLS
  zoo_entry adapted{base.name, base.family, [f, o, l](const model_options&, const training& t, const device& d) { return f.run(l, o, t, d); }};
  return {std::move(adapted), f.counts(l, o)};
}

/// LoRA on a model outside the transformers families (torchvision's, --graph): PEFT's
/// get_peft_model by the module names of `lora` (--lora r=8,targets=mlp.0,mlp.3), every other
/// module frozen; PEFT's counts are the budget's (evaluated once at `plan` on `dev`). The
/// library's refusals (a target that matches nothing or no Linear, one copy of a repeat) are
/// usage errors.
inline lora_run lora_by_name_model(const zoo_entry& base, const model_options& o, const cli::parsed_args& a, const training& plan, const device& dev) {
  std::string targets;
  const auto l = parse_lora(*a.get("lora"), 65535, "", &targets);
  refuse_llama_only_options(base, l);
  if (targets.empty()) targets = base.lora_default_targets;
  if (targets.empty())
    throw cli::usage_error("--lora on " + base.name + " needs targets=NAME,... (PEFT has no default target_modules outside the transformers families): "
                           "PyTorch module paths or their ends, as --freeze-all-but takes them, e.g. targets=mlp.0,mlp.3");
  if (a.has("quant") || l.base != base_weights::same || l.modules_to_save != 0 || l.kbit_prepared)
    throw cli::usage_error("--lora on " + base.name + ": base=, --quant, modules_to_save= and prepare_kbit= are not modelled on this model "
                           "(its frozen base is in the --precision's type)");
  zoo_entry adapted{base.name, base.family, [f = base.lora_by_name, targets, l, o](const model_options&, const training& t, const device& d) { return f(targets, l, o, t, d); }};
  try {
    const auto b = adapted.run(o, plan, dev).budget;
    return {std::move(adapted), {b.trainable_count, b.parameter_count}};
  } catch (const std::invalid_argument& ex) {
    const std::string what = ex.what(), prefix = "gpubudget: ";
    throw cli::usage_error("--lora targets=" + targets + ": " + (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
  }
}

/// `--quant` with `--lora`: the frozen base's storage (replaces its base=).
inline void apply_quant(const cli::parsed_args& a, models::lora_config& l) {
  if (!a.has("quant")) return;
  if (l.base != base_weights::same) throw cli::usage_error("--quant and --lora base= contradict each other (give one)");
  l.base = parse_quant(a);
}

/// The serving flags, checked; `precision` is the CLI's --precision name.
struct serve_request {
  serving s{};
  std::string kv_name;
  std::string engine;  ///< vllm | hf
};

inline serve_request parse_serve(const cli::parsed_args& a, const models::llama_config& g, const std::string& precision) {
  serve_request r;
  r.s.precision = precision == "fp32" ? fp32 : (precision == "fp16" || precision == "amp_fp16") ? pure_fp16 : pure_bf16;
  r.kv_name = precision == "fp32" ? "fp32" : (precision == "fp16" || precision == "amp_fp16") ? "fp16" : "bf16";
  if (a.has("kv-dtype")) r.kv_name = cli::parse_choice("--kv-dtype", *a.get("kv-dtype"), {"fp8", "fp16", "bf16"});
  r.s.kv = r.kv_name == "fp8" ? dtype::fp8 : r.kv_name == "fp16" ? dtype::fp16 : r.kv_name == "bf16" ? dtype::bf16 : dtype::fp32;
  r.s.context = a.has("context") ? cli::parse_integer("--context", *a.get("context"), 1, 1 << 24) : g.context;
  if (r.s.context > g.context)
    throw cli::usage_error("--context: " + std::to_string(r.s.context) + " is longer than the model's " + std::to_string(g.context) +
                           " positions (raise them explicitly with --ctx N, e.g. for RoPE scaling)");
  r.s.concurrency = a.has("concurrency") ? cli::parse_integer("--concurrency", *a.get("concurrency"), 1, 1 << 20) : 1;
  r.s.weights = parse_quant(a);
  r.engine = a.has("engine") ? cli::parse_choice("--engine", *a.get("engine"), {"vllm", "hf"}) : "vllm";
  r.s.engine = r.engine == "hf" ? serving_engine::hf : serving_engine::vllm;
  if (r.s.engine == serving_engine::hf && !a.has("new-tokens"))
    throw cli::usage_error("--engine hf needs --new-tokens N (the tokens generate() adds to each sequence's prompt)");
  if (a.has("new-tokens") && r.s.engine != serving_engine::hf) throw cli::usage_error("--new-tokens needs --engine hf (vLLM's budget does not depend on it)");
  // generate() on CUDA through the caching allocator model (estimate.cpp gives --alloc-conf's settings)
  r.s.model_allocator = r.s.engine == serving_engine::hf;
  if (a.has("alloc-conf") && r.s.engine != serving_engine::hf)
    throw cli::usage_error("--alloc-conf with --serve needs --engine hf (vLLM's budget takes gpu_memory_utilization, not the caching allocator model)");
  if (a.has("new-tokens")) {
    r.s.generated = cli::parse_integer("--new-tokens", *a.get("new-tokens"), 1, 1 << 24);
    if (r.s.generated >= r.s.context)
      throw cli::usage_error("--new-tokens: " + std::to_string(r.s.generated) + " leaves no prompt in a --context of " + std::to_string(r.s.context) + " tokens");
  }
  return r;
}

/// Flags that make no sense with --serve (a training step's settings, or --seq: use --context).
inline void reject_with_serve(const cli::parsed_args& a) {
  for (const char* n : {"lora", "batch", "micro-batch", "optimizer", "step", "loss", "ema", "inference", "checkpoint-all", "checkpoint-blocks",
                        "freeze-all-but", "freeze-all", "teacher", "teacher-offload", "fragmentation", "steps", "runtime", "seq"})
    if (a.has(n)) throw cli::usage_error(std::string("--") + n + " does not combine with --serve" + (std::string(n) == "seq" ? " (use --context N)" : ""));
}

/// The serving flags without --serve are errors.
inline void require_serve_for_its_flags(const cli::parsed_args& a) {
  for (const char* n : {"context", "concurrency", "kv-dtype", "engine", "new-tokens"})
    if (a.has(n) && !a.has("serve")) throw cli::usage_error(std::string("--") + n + " needs --serve");
  if (a.has("serve") && a.has("padded-batch") && a.get("engine").value_or("vllm") != "hf")
    throw cli::usage_error("--padded-batch with --serve is generate() on left-padded prompts: add --engine hf (vLLM schedules unpadded sequences)");
  if (a.has("serve") && a.has("attention-mask"))
    throw cli::usage_error("--attention-mask is a training or --inference forward's: generate() (--engine hf) always passes one, vLLM none");
}

}  // namespace gpubudget::tools
