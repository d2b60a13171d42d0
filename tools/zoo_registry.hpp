// tools/zoo_registry.hpp — every zoo model by name, budgeted at run time from command-line
// sizes (the models are constexpr functions, so the same code serves compile time).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpubudget/distributed.hpp>
#include <gpubudget/report.hpp>
#include <gpubudget/models/gpt.hpp>
#include <gpubudget/models/peft.hpp>
#include <gpubudget/models/seeds.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/models/transformers.hpp>
#include <gpubudget/timeline.hpp>

namespace gpubudget::tools {

/// Sizes a model family may read (unset = the family's default).
struct model_options {
  std::map<std::string, std::int64_t> values;
  std::int64_t get(const std::string& k, std::int64_t fallback) const {
    auto it = values.find(k);
    return it == values.end() ? fallback : it->second;
  }
};

/// What one run of a zoo model gives: the totals, and its module names (for checking
/// `--freeze-all-but` names: the library's rule, every module path, the top-level ones for the
/// message).
struct evaluation {
  memory_budget budget{};
  std::vector<std::string> module_paths;     ///< every module path, in order (copies as ranges)
  std::vector<std::string> top_level_names;  ///< named children of the root
  std::function<bool(std::string_view)> names_a_module;  ///< gpubudget::names_a_module on the model
  std::function<std::string(std::string_view)> part_names_below;  ///< gpubudget::part_names_below on the model
  std::function<step_facts()> facts;         ///< for per-rank budgets (--gpus; distributed.hpp), walked on demand
  std::function<memory_timeline()> timeline; ///< the same step's moments (--svg), walked on demand
  std::function<std::string()> block_table;  ///< gpubudget::layer_table of the same step (--format md), on demand
  /// gpubudget::max_micro_batch of the same step and device (--largest-batch), on demand
  std::function<std::int64_t(batch_bounds)> largest_micro_batch;
};

/// Budgets `m` and collects its record names. The only place the tools read `layer` fields.
template <std::size_t N>
evaluation evaluate(const model<N>& m, const training& t, const device& d) {
  evaluation e{budget_totals(m, t, d), module_names(m), {}, [m](std::string_view name) { return gpubudget::names_a_module(m, name); },
               [m](std::string_view name) { return gpubudget::part_names_below(m, name); }, {},
               [m, t, d] { return gpubudget::timeline(m, t, d); }, [m, t, d] { return layer_table(budget(m, t, d)); },
               [m, t, d](batch_bounds bounds) { return max_micro_batch(m, t, d, bounds); }};
  e.facts = [m, t, d] { return t.inference ? step_facts{} : rank_facts(m, t, d); };
  if constexpr (N > 0) {
    for (std::int32_t c = 1; c < m.records[0].span; c += m.records[static_cast<std::size_t>(c)].span)
      if (const char* n = m.records[static_cast<std::size_t>(c)].name) e.top_level_names.push_back(detail::copies_path(m.records[static_cast<std::size_t>(c)], n));
  }
  return e;
}

/// PEFT's LoRA on a model outside the Llama family (GPT-2's causal LM, BERT's classifier, T5): the
/// family's module names and default targets, and the LoRA'd model and PEFT's counts with the
/// size options applied (models::gpt_lora, bert_lora_seq_cls, t5_lora; tools/llm_cli.hpp).
struct peft_family {
  std::string family;           ///< "GPT-2", for messages
  std::string module_names;     ///< its target_modules names, for messages
  std::string default_targets;  ///< PEFT's default target_modules for the family
  std::int64_t modules = 0;     ///< their lora_target bits (PEFT's "all-linear": all of them)
  std::function<std::int64_t(const model_options&)> width;  ///< the largest rank
  std::function<evaluation(const models::lora_config&, const model_options&, const training&, const device&)> run;
  std::function<models::parameter_counts(const models::lora_config&, const model_options&)> counts;
};

struct zoo_entry {
  std::string name;
  std::string family;  ///< which size options apply (see families())
  std::function<evaluation(const model_options&, const training&, const device&)> run;
  /// The longest --seq the model's positions allow (bert: max_position_embeddings, llama:
  /// max_position_embeddings, gpt: --ctx); empty for models without a sequence.
  std::function<std::int64_t(const model_options&)> max_seq{};
  /// A Llama-family decoder's configuration (zoo name or --hf-config alike): what --lora and
  /// --serve build on. `experts` is set for a Mixtral-style mixture of experts.
  std::optional<models::llama_config> llama{};
  std::optional<models::moe_config> experts{};
  /// With `llama`: a classification head of this many classes (--task seq-cls), 0: the LM head.
  std::int64_t labels = 0;
  /// What --lora builds on outside the Llama family (GPT-2, BERT's classifier, T5).
  std::optional<peft_family> peft{};
  /// What --lora builds on for any other model with module names (torchvision's, --graph):
  /// models::get_peft_model with the targets= names (PEFT's target_modules list, comma-separated).
  std::function<evaluation(const std::string& targets, const models::lora_config&, const model_options&, const training&, const device&)> lora_by_name{};
  /// With lora_by_name: PEFT's default target_modules for the model's family, "" where PEFT has
  /// none (it asks for target_modules).
  std::string lora_default_targets{};
  /// The model's own loss, --loss's default where set (a --graph file's "loss": transformers'
  /// models exported from ATen dumps compute theirs in forward).
  std::string default_loss{};
  /// Why a padded batch (--padded-batch) is not modelled on this model, empty where it is (T5
  /// through SDPA: models::t5's named error, said before the model is built).
  std::string padded_batch_unmodelled{};
  /// A note printed under the markdown tables: what this budget assumes that a user's setup may not
  /// (T5 through SDPA, which transformers before 5.13 does not run); empty: none.
  std::string budget_note{};
};
/// Does `e` model transformers' attention_mask (--padded-batch, --attention-mask)? The Llama family,
/// BERT, GPT-2 and T5 (eager: its mask goes into the position bias padded or not, op_rules.md L35, so
/// nothing changes there; through SDPA a padded batch is refused: zoo_entry::padded_batch_unmodelled).
inline bool takes_attention_mask(const zoo_entry& e) { return e.llama || e.family == "bert" || e.family == "gpt" || e.family == "t5"; }

/// A loss by its name (--loss, a graph file's "loss"): mean_square, cross_entropy, causal_lm;
/// any other name (the names are checked where they are read) is the mean square.
inline loss_kind loss_kind_named(const std::string& name) {
  return name == "cross_entropy" ? loss_kind::cross_entropy : name == "causal_lm" ? loss_kind::causal_lm : loss_kind::mean_square;
}

namespace detail {
/// PEFT's default LoRA targets of GPT-2 and BERT (peft/utils/constants.py,
/// TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING: "gpt2": ["c_attn"], "bert": ["query", "value"]).
inline const char* const gpt2_default_lora_targets = "c_attn";
inline const char* const bert_default_lora_targets = "query,value";

/// peft_family of a GPT-2 causal LM, a BERT classifier (`labels` classes) and T5, each from its
/// configuration with the size options applied.
inline peft_family gpt_peft(std::function<models::gpt_config(const model_options&)> config) {
  return {"GPT-2", "c_attn, c_proj, c_fc", gpt2_default_lora_targets, gpt2_lora_modules, [config](const model_options& o) { return config(o).width; },
          [config](const models::lora_config& l, const model_options& o, const training& t, const device& d) { return evaluate(models::gpt_lora(config(o), l), t, d); },
          [config](const models::lora_config& l, const model_options& o) { return models::gpt_lora_counts(config(o), l); }};
}
inline peft_family bert_classifier_peft(std::function<models::bert_config(const model_options&)> config, std::int64_t classifier_dropout) {
  return {"BERT", "query, key, value, dense", bert_default_lora_targets, bert_lora_modules, [config](const model_options& o) { return config(o).width; },
          [config, classifier_dropout](const models::lora_config& l, const model_options& o, const training& t, const device& d) {
            return evaluate(models::bert_lora_seq_cls(config(o), l, classifier_dropout), t, d);
          },
          [config](const models::lora_config& l, const model_options& o) { return models::bert_lora_counts(config(o), l); }};
}
inline peft_family t5_peft(std::function<models::t5_config(const model_options&)> config) {
  return {"T5", "q, k, v, o, wi, wo", "q,v", t5_lora_modules, [config](const model_options& o) { return config(o).width; },
          [config](const models::lora_config& l, const model_options& o, const training& t, const device& d) { return evaluate(models::t5_lora(config(o), l), t, d); },
          [config](const models::lora_config& l, const model_options& o) { return models::t5_lora_counts(config(o), l); }};
}
}  // namespace detail

/// One size option of a family: name (without --), accepted range, default shown in --help.
struct size_option {
  std::string name;
  std::int64_t lo, hi;
  std::string fallback;  ///< the default, as --help shows it
};

/// The families and their size options (the CLI rejects an option the model's family lacks).
inline std::map<std::string, std::vector<size_option>> families() {
  const std::int64_t big = 1 << 20;
  return {
      {"image", {{"image-size", 1, 16384, "224"}, {"classes", 1, big, "1000"}}},
      {"mlp", {{"in", 1, big, "1024"}, {"hidden", 1, big, "4096"}}},
      {"bert", {{"seq", 1, big, "512"}}},
      {"llama",
       {{"seq", 1, big, "the model's context"},
        {"vocab", 1, big, "the model's"},
        {"ctx", 1, big, "the model's"},
        {"d-model", 1, 65536, "the model's"},
        {"layers", 1, 1000, "the model's"},
        {"heads", 1, 1024, "the model's"},
        {"kv-heads", 1, 1024, "the model's"},
        {"ffn", 1, big, "the model's"},
        {"head-dim", 1, 65536, "the model's"}}},
      {"gpt",
       {{"vocab", 1, big, "50257"},
        {"ctx", 1, big, "1024"},
        {"d-model", 1, 65536, "the model's: gpt, gpt2 768"},
        {"layers", 1, 1000, "the model's: gpt, gpt2 12"},
        {"heads", 1, 1024, "the model's: gpt, gpt2 12"},
        {"dropout", 0, 100, "0"},
        {"attn-dropout", 0, 100, "--dropout"},
        {"seq", 1, big, "1024"}}},
      {"t5",
       {{"seq", 1, big, "512"},
        {"target-seq", 1, big, "--seq"},
        {"vocab", 1, big, "the model's"},
        {"d-model", 1, 65536, "the model's"},
        {"d-kv", 1, 65536, "the model's"},
        {"layers", 2, 1000, "the model's"},
        {"heads", 1, 1024, "the model's"},
        {"ffn", 1, big, "the model's"}}},
      {"bev", {{"layers", 1, 64, "2"}, {"channels", 1, 4096, "64"}, {"size", 1, 4096, "64"}, {"heads", 1, 256, "4"}, {"kernel", 1, 63, "7"}}},
      {"dual_vit", {{"image-size", 16, 4096, "448"}, {"classes", 1, big, "200"}}},
      {"gat", {{"nodes", 1, 100000000, "2000"}, {"edges", 1, 1000000000, "20000"}, {"ids", 1, 100000000, "5000"}}},
      {"graph", {}},  // --graph FILE (graph_source.hpp): the file fixes every size
      {"temporal", {{"c1", 1, 4096, "64"}, {"c2", 1, 4096, "128"}, {"c3", 1, 4096, "256"}, {"image-size", 1, 4096, "96"}}},
  };
}

/// Settings the reference check sets (from a case's descriptive fields) that have no flag of
/// their own: GPT attention through F.scaled_dot_product_attention; seed 004 with each frame's
/// CNN under torch.utils.checkpoint.
inline const std::string hidden_sdpa = "_sdpa", hidden_checkpoint_frames = "_checkpoint-frames";
/// A Mixtral-style reference case's experts and top-k (default: Mixtral-8x7B's 8 and 2).
inline const std::string hidden_experts = "_experts", hidden_top_k = "_top-k";
/// The reference check's Llama-family case with a partial RoPE (its "partial_rotary_factor"):
/// the channels of a head RoPE rotates (llama_config::rotary_dim).
inline const std::string hidden_rotary_dim = "_rotary-dim";
/// ... and with a sliding window (its "sliding_window": llama_config::sliding_window).
inline const std::string hidden_sliding_window = "_sliding-window";
/// --padded-batch (takes_attention_mask): the batch is padded, the model called with an attention_mask
/// that has zeros (llama_config::, bert_config::, gpt_config::padded_batch; T5: no change).
inline const std::string padded_batch_option = "padded-batch";
/// --attention-mask on a Llama-family model: the model is called with an attention_mask that pads
/// nothing (a collator's or a tokenizer's output passed whole): its sliding-window masks one per
/// sample (llama_config::attention_mask_passed; op_rules.md L31). BERT, GPT-2 and T5 skip or build
/// theirs alike with or without it.
inline const std::string attention_mask_option = "attention-mask";
/// A reference case's attention "eager" on a Llama-family model: 1, eager_attention_forward; 2, with
/// Gemma 2's attn_logit_softcapping (measure26_llm.py's eager cases).
inline const std::string hidden_eager_attention = "_eager-attention";
/// A reference case of a Llama-family model written out after transformers' code (measure26*.py,
/// measure_cuda.py): no DynamicCache (llama_config::use_cache false), [B, T, d] RoPE tables
/// (per_sample_rope) passed to checkpointed layers positionally (positional_layer_inputs), as
/// those scripts' decoders make them.
inline const std::string hidden_written_out = "_written-out";

namespace detail {
template <class F>
zoo_entry image_model(std::string name, F make) {
  zoo_entry e{name, "image", [make](const model_options& o, const training& t, const device& d) {
                return evaluate(make(o.get("image-size", 224), o.get("classes", 1000)), t, d);
              }};
  e.lora_by_name = [make](const std::string& targets, const models::lora_config& l, const model_options& o, const training& t, const device& d) {
    return evaluate(models::get_peft_model(make(o.get("image-size", 224), o.get("classes", 1000)), targets.c_str(), l), t, d);
  };
  return e;
}
inline models::gpt_config gpt_from(models::gpt_config g, const model_options& o) {
  g.vocab = o.get("vocab", g.vocab);
  g.context = o.get("ctx", g.context);
  g.width = o.get("d-model", g.width);
  g.layers = o.get("layers", g.layers);
  g.heads = o.get("heads", g.heads);
  g.dropout_percent = o.get("dropout", g.dropout_percent);
  g.attention_dropout_percent = o.get("attn-dropout", g.dropout_percent);  // GPT-2: attn_pdrop = resid_pdrop
  if (o.get(hidden_sdpa, 0) != 0) g.attention = attention_impl::flash;
  g.seq = o.get("seq", g.seq);
  g.padded_batch = o.get(padded_batch_option, 0) > 0;
  return g;
}
inline zoo_entry gpt_model(std::string name, models::gpt_config base) {
  zoo_entry e{name, "gpt", [base](const model_options& o, const training& t, const device& d) { return evaluate(models::gpt(gpt_from(base, o)), t, d); },
              [base](const model_options& o) { return o.get("ctx", base.context); }};
  e.peft = gpt_peft([base](const model_options& o) { return gpt_from(base, o); });
  return e;
}
/// A BERT configuration with --seq and --padded-batch applied.
inline models::bert_config bert_from(models::bert_config b, const model_options& o) {
  b.seq = o.get("seq", b.seq);
  b.padded_batch = o.get(padded_batch_option, 0) > 0;
  return b;
}
inline zoo_entry bert_model(std::string name, models::bert_config base) {
  zoo_entry e{name, "bert", [base](const model_options& o, const training& t, const device& d) { return evaluate(models::bert(bert_from(base, o)), t, d); },
              [base](const model_options&) { return base.max_positions; }};
  // --lora by module name on BertModel (PEFT's default targets query, value)
  e.lora_by_name = [base](const std::string& targets, const models::lora_config& l, const model_options& o, const training& t, const device& d) {
    return evaluate(models::get_peft_model(models::bert(bert_from(base, o)), targets.c_str(), l), t, d);
  };
  e.lora_default_targets = bert_default_lora_targets;
  return e;
}
/// A Llama-family configuration with the size options of the command line applied.
inline models::llama_config llama_from(models::llama_config g, const model_options& o) {
  g.seq = o.get("seq", g.seq);
  g.vocab = o.get("vocab", g.vocab);
  g.context = o.get("ctx", g.context);
  g.width = o.get("d-model", g.width);
  g.layers = o.get("layers", g.layers);
  g.heads = o.get("heads", g.heads);
  g.kv_heads = o.get("kv-heads", g.kv_heads);
  g.ffn = o.get("ffn", g.ffn);
  g.head_dim = o.get("head-dim", g.head_dim);
  g.rotary_dim = o.get(hidden_rotary_dim, g.rotary_dim);
  g.sliding_window = o.get(hidden_sliding_window, g.sliding_window);
  if (const auto eager = o.get(hidden_eager_attention, 0); eager > 0) g.eager_attention = true, g.attention_softcap = eager == 2;
  if (o.get(hidden_written_out, 0) > 0) g = models::hand_written_decoder(g);
  if (o.get(padded_batch_option, 0) > 0) g.padded_batch = true;
  if (o.get(attention_mask_option, 0) > 0) g.attention_mask_passed = true;
  return g;
}
/// Gemma 2 or Gemma 3 on `t` (models::visit_gemma2, visit_gemma3: training::checkpoint_blocks
/// checkpoints each layer); the zoo and --hf-config share these instantiations.
inline evaluation evaluate_gemma_alternating(const models::llama_config& g, const training& t, const device& d) {
  if (g.gemma2) return models::visit_gemma2(g, [&](const auto& m) { return evaluate(m, t, d); });
  return models::visit_gemma3(g, [&](const auto& m) { return evaluate(m, t, d); });
}
/// A Llama-family zoo entry: models::llama, models::phi3 for Phi-3's packed projections, Gemma 3's layers.
inline zoo_entry llama_model(std::string name, models::llama_config base) {
  return {name, "llama",
          [base](const model_options& o, const training& t, const device& d) {
            const auto g = llama_from(base, o);
            if (g.gemma_alternating()) return evaluate_gemma_alternating(g, t, d);
            if (g.olmo3) return models::visit_olmo3(g, [&](const auto& m) { return evaluate(m, t, d); });
            if (g.olmo2) return evaluate(models::olmo2(g), t, d);
            if (g.granite) return evaluate(models::granite(g), t, d);
            return g.fused_projections ? evaluate(models::phi3(g), t, d) : evaluate(models::llama(g), t, d);
          },
          [base](const model_options& o) { return o.get("ctx", base.context); }, base, std::nullopt};
}
/// The experts of a Mixtral-style model: `m` with the reference check's hidden options applied.
inline models::moe_config moe_from(const model_options& o, models::moe_config m = {}) {
  m.experts = o.get(hidden_experts, m.experts);
  m.top_k = o.get(hidden_top_k, m.top_k);
  if (o.get(hidden_written_out, 0) > 0) m.impl = moe_impl::expert_modules;  // measure26_llm.py's Mixtral: 4.x's loop
  return m;
}
/// A T5 configuration with the size options of the command line applied (--layers: both stacks).
inline models::t5_config t5_from(models::t5_config t, const model_options& o) {
  t.seq = o.get("seq", t.seq);
  t.target_seq = o.get("target-seq", t.seq);
  t.vocab = o.get("vocab", t.vocab);
  t.width = o.get("d-model", t.width);
  t.head_width = o.get("d-kv", t.head_width);
  t.layers = o.get("layers", t.layers);
  t.decoder_layers = o.get("layers", t.decoder_layers);
  t.heads = o.get("heads", t.heads);
  t.ffn = o.get("ffn", t.ffn);
  t.padded_batch = o.get(padded_batch_option, 0) > 0;
  return t;
}
inline zoo_entry t5_model(std::string name, models::t5_config base) {
  zoo_entry e{name, "t5", [base](const model_options& o, const training& t, const device& d) { return evaluate(models::t5(t5_from(base, o)), t, d); }};
  e.peft = t5_peft([base](const model_options& o) { return t5_from(base, o); });
  return e;
}
/// A Mixtral-style decoder (issue D): the Llama family's size options, MoE MLPs (8 experts, top 2).
inline zoo_entry mixtral_model(std::string name, models::llama_config base, models::moe_config experts = {}) {
  return {name, "llama",
          [base, experts](const model_options& o, const training& t, const device& d) {
            const auto g = llama_from(base, o);
            return evaluate(models::mixtral(g, moe_from(o, experts)), t, d);
          },
          [base](const model_options& o) { return o.get("ctx", base.context); }, base, experts};
}
/// The plain MLP: input(in), linear(hidden), gelu, linear(in).
inline void add_mlp_model(std::vector<zoo_entry>& z) {
  z.push_back({"mlp", "mlp", [](const model_options& o, const training& t, const device& d) {
                 const auto in = o.get("in", 1024), hidden = o.get("hidden", 4096);
                 return evaluate(sequential(input(in), linear(hidden), gelu(), linear(in)), t, d);
               }});
}
/// The torchvision image classifiers (models/torchvision.hpp).
inline void add_torchvision_models(std::vector<zoo_entry>& z) {
  z.push_back(image_model("resnet18", [](auto s, auto c) { return models::resnet18(s, c); }));
  z.push_back(image_model("resnet34", [](auto s, auto c) { return models::resnet34(s, c); }));
  z.push_back(image_model("resnet50", [](auto s, auto c) { return models::resnet50(s, c); }));
  z.push_back(image_model("resnet101", [](auto s, auto c) { return models::resnet101(s, c); }));
  z.push_back(image_model("resnet152", [](auto s, auto c) { return models::resnet152(s, c); }));
  z.push_back(image_model("wide_resnet50_2", [](auto s, auto c) { return models::wide_resnet50_2(s, c); }));
  z.push_back(image_model("vit_b_16", [](auto s, auto c) { return models::vit_b_16(s, c); }));
  z.push_back(image_model("vit_l_16", [](auto s, auto c) { return models::vit_l_16(s, c); }));
  z.push_back(image_model("convnext_tiny", [](auto s, auto c) { return models::convnext_tiny(s, c); }));
  z.push_back(image_model("convnext_small", [](auto s, auto c) { return models::convnext_small(s, c); }));
  z.push_back(image_model("vgg11", [](auto s, auto c) { return models::vgg11(s, c); }));
  z.push_back(image_model("vgg11_bn", [](auto s, auto c) { return models::vgg11_bn(s, c); }));
  z.push_back(image_model("vgg16", [](auto s, auto c) { return models::vgg16(s, c); }));
  z.push_back(image_model("vgg16_bn", [](auto s, auto c) { return models::vgg16_bn(s, c); }));
  z.push_back(image_model("mobilenet_v2", [](auto s, auto c) { return models::mobilenet_v2(s, c); }));
  z.push_back(image_model("mobilenet_v3_large", [](auto s, auto c) { return models::mobilenet_v3_large(s, c); }));
  z.push_back(image_model("efficientnet_b0", [](auto s, auto c) { return models::efficientnet_b0(s, c); }));
  z.push_back(image_model("densenet121", [](auto s, auto c) { return models::densenet121(s, c); }));
  z.push_back(image_model("swin_t", [](auto s, auto c) { return models::swin_t(s, c); }));
}
/// The transformer models: GPT-2, BERT, the Llama family (Llama 2 and 3, Mistral, Phi-3,
/// Mixtral, Qwen2, Gemma) and T5.
inline void add_transformer_models(std::vector<zoo_entry>& z) {
  z.push_back(gpt_model("gpt", models::gpt2_small(1024)));
  z.push_back(gpt_model("gpt2", models::gpt2_small(1024)));
  z.push_back(gpt_model("gpt2-medium", models::gpt2_medium(1024)));
  z.push_back(gpt_model("gpt2-large", models::gpt2_large(1024)));
  z.push_back(gpt_model("gpt2-xl", models::gpt2_xl(1024)));
  z.push_back(bert_model("bert-base", models::bert_base(512)));
  z.push_back(bert_model("bert-large", models::bert_large(512)));
  z.push_back(llama_model("llama-2-7b", models::llama2_7b(4096)));
  z.push_back(llama_model("llama-2-13b", models::llama2_13b(4096)));
  z.push_back(llama_model("llama-2-70b", models::llama2_70b(4096)));
  z.push_back(llama_model("llama-3-8b", models::llama3_8b(8192)));
  z.push_back(llama_model("mistral-7b", models::mistral_7b(4096)));
  z.push_back(llama_model("phi-3-mini", models::phi3_mini(4096)));  // issue D
  z.push_back(mixtral_model("mixtral-8x7b", models::mixtral_8x7b(4096)));  // issue D
  z.push_back(llama_model("qwen2-0.5b", models::qwen2_0_5b(131072)));
  z.push_back(llama_model("qwen2-7b", models::qwen2_7b(131072)));
  z.push_back(llama_model("qwen3-0.6b", models::qwen3_0_6b(40960)));
  z.push_back(llama_model("qwen3-8b", models::qwen3_8b(40960)));
  z.push_back(llama_model("gemma-2b", models::gemma_2b(8192)));
  z.push_back(llama_model("gemma-2-2b", models::gemma2_2b(8192)));
  z.push_back(llama_model("gemma-2-9b", models::gemma2_9b(8192)));
  z.push_back(llama_model("gemma-2-27b", models::gemma2_27b(8192)));
  z.push_back(llama_model("gemma-3-1b", models::gemma3_1b(32768)));
  z.push_back(llama_model("gemma-3-270m", models::gemma3_270m(32768)));
  z.push_back(llama_model("olmo2-1b", models::olmo2_1b(4096)));
  z.push_back(llama_model("olmo2-7b", models::olmo2_7b(4096)));
  z.push_back(llama_model("olmo3-7b", models::olmo3_7b(4096)));
  z.push_back(llama_model("granite-3.1-2b", models::granite3_2b(4096)));
  z.push_back(t5_model("t5-small", models::t5_small(512)));
  z.push_back(t5_model("t5-base", models::t5_base(512)));
  z.push_back(t5_model("t5-large", models::t5_large(512)));
  z.push_back(t5_model("t5-3b", models::t5_3b(512)));
  z.push_back(t5_model("t5-11b", models::t5_11b(512)));
}
/// The post-mortems' models (README): BEV local attention (unfold and depthwise-conv variants),
/// DualViT's pair-wise cross-attention, the GAT graph pipeline, the temporal CNN + transformer.
inline void add_post_mortem_models(std::vector<zoo_entry>& z) {
  z.push_back({"bev_unfold", "bev", [](const model_options& o, const training& t, const device& d) {
                 return evaluate(models::bev_local_attention_n(local_attention_impl::unfold, o.get("layers", 2), o.get("channels", 64),
                                                                   o.get("size", 64), o.get("heads", 4), o.get("kernel", 7)), t, d);
               }});
  z.push_back({"bev_dwconv", "bev", [](const model_options& o, const training& t, const device& d) {
                 return evaluate(models::bev_local_attention_n(local_attention_impl::depthwise, o.get("layers", 2), o.get("channels", 64),
                                                                   o.get("size", 64), o.get("heads", 4), o.get("kernel", 7)), t, d);
               }});
  z.push_back({"dual_vit_pwca", "dual_vit", [](const model_options& o, const training& t, const device& d) {
                 return evaluate(models::dual_vit_pwca(o.get("image-size", 448), o.get("classes", 200)), t, d);
               }});
  z.push_back({"gat", "gat", [](const model_options& o, const training& t, const device& d) {
                 return evaluate(models::gat_graph(o.get("nodes", 2000), o.get("edges", 20000), o.get("ids", 5000)), t, d);
               }});
  z.push_back({"temporal", "temporal", [](const model_options& o, const training& t, const device& d) {
                 return evaluate(models::temporal_cnn_transformer<5>(o.get("c1", 64), o.get("c2", 128), o.get("c3", 256),
                                                                          o.get("image-size", 96), 2, 4, o.get(hidden_checkpoint_frames, 0) != 0), t, d);
               }});
}
}  // namespace detail

/// Every zoo model, in the order the CLI lists them.
inline std::vector<zoo_entry> zoo() {
  std::vector<zoo_entry> z;
  detail::add_mlp_model(z);
  detail::add_torchvision_models(z);
  detail::add_transformer_models(z);
  detail::add_post_mortem_models(z);
  return z;
}

/// The reference measurement cases: model, options and training step.
struct reference_case {
  std::string name, model;
  model_options options;
  std::int64_t batch;
  optimizer_kind optimizer;
  std::string train_only;
  bool checkpoint_blocks = false;
};

inline std::vector<reference_case> reference_cases() {
  return {
      {"mlp_b8", "mlp", {}, 8, adamw, "", false},
      {"resnet18_b2", "resnet18", {}, 2, sgd_momentum, "", false},
      {"vit_b_16_b2", "vit_b_16", {}, 2, adamw, "", false},
      {"gpt2_small_b2_t128", "gpt2", {{{"seq", 128}}}, 2, adamw, "", false},
      {"gpt2_small_ckpt_b2_t128", "gpt2", {{{"seq", 128}}}, 2, adamw, "", true},
      {"dual_vit_pwca_b1_448", "dual_vit_pwca", {}, 1, adamw, "", false},
      {"bev_unfold_b1_64", "bev_unfold", {}, 1, adamw, "", false},
      {"bev_dwconv_b1_64", "bev_dwconv", {}, 1, adamw, "", false},
      {"gat_n2000_e20000", "gat", {}, 1, adamw, "", false},
      {"convnext_tiny_frozen_b2", "convnext_tiny", {}, 2, adamw, "classifier", false},
      {"convnext_tiny_full_b2", "convnext_tiny", {}, 2, adamw, "", false},
      {"temporal_64_128_256_b2_t5", "temporal", {}, 2, adamw, "", false},
  };
}

/// The zoo entry named `name`, or nullptr.
inline const zoo_entry* find_model(const std::vector<zoo_entry>& z, const std::string& name) {
  for (const auto& e : z)
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace gpubudget::tools
