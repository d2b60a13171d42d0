// tools/real_library_reference.hpp — the real-library CUDA references for `--reference FILE`:
// benchmarks/accuracy/reference/cuda-h100/real-libraries-h100.json and its expandable_segments
// twin, made by benchmarks/gpu/measure_real_libraries.py (issue F items 2 and 6). Their format:
//
//   {"environment": {"gpu": ..., "PYTORCH_CUDA_ALLOC_CONF": ...}, "cap_gib": 16,
//    "cases": {NAME: {measured fields}}, "specs": {NAME: [KIND, {how the case was built}]}}
//
// KIND tv {model, batch, size, prec}: a torchvision model; hf {cfg, arch cls|s2s|causal (default),
// batch, seq, prec, ckpt, base, quant, prepare_kbit, lora {r, targets}}: a transformers model from hf-configs/CFG;
// graph {graph, factory, kwargs, batch, prec}: a module tools/gpubudget-export wrote to graphs/GRAPH, trained
// on the loss (out ** 2).mean(), or on its own (the file's "loss": model(ids, ids)); gen {cfg, batch, prompt, new}: generate(); max {kind tv|hf|graph, the same keys without batch}: the
// largest batch that trained under a cap_gib device. Every spec is validated before anything is
// estimated (a malformed one is a usage error naming the case and the key); a well-formed spec
// the estimator cannot express yet is listed as such by the check, never passed.
#pragma once
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "budget_view.hpp"
#include "cli_args.hpp"
#include "graph_source.hpp"
#include "hf_config.hpp"
#include "llm_cli.hpp"
#include "zoo_registry.hpp"

namespace gpubudget::tools::real_libraries {

/// cuBLAS handles of a training step, each with its workspace inside the caching allocator: the
/// main thread's and autograd's device thread's (PyTorch keeps a handle and a workspace per
/// thread and stream: aten/src/ATen/cuda/CublasHandlePool.cpp, getCurrentCUDABlasHandle and
/// getCUDABlasLtWorkspace). Trace: cuda-h100/resnet18_b2.json.gz events 285 (forward, main thread,
/// via getCUDABlasLtWorkspace) and 304 (backward, autograd's thread), 33,554,432 B each from
/// at::cuda::setWorkspaceForHandle; gpt2_small_b2_t64 the same (events 207, 692). Both stay
/// allocated: real-libraries-h100.json's "resident" (after step 3, gradients freed) holds them.
inline constexpr std::int64_t cublas_handles_in_a_training_step = 2;

/// A file of this format: "cases" and "specs" are objects keyed by case name.
inline bool is_library_file(const nlohmann::json& j) {
  return j.is_object() && j.contains("cases") && j["cases"].is_object() && j.contains("specs");
}

/// One case of the file, validated.
struct library_case {
  std::string name, kind;                                        ///< kind: tv, hf, gen, max or cap
  nlohmann::json spec;                                           ///< the spec's object (max: its own keys)
  std::map<std::string, std::optional<std::int64_t>> measured;   ///< the numeric fields
};

struct library_file {
  std::string path, configs;  ///< configs: the folder of the hf specs' config files
  std::string graphs;         ///< the folder of the graph specs' exported graphs (tools/gpubudget-export)
  std::string gpu, alloc_conf;
  std::string transformers;  ///< environment.transformers: the release its hf specs ran
  double cap_gib = 16.0;
  std::vector<library_case> cases;
};

namespace detail {

[[noreturn]] inline void malformed(const library_file& f, const std::string& c, const std::string& what) {
  throw cli::usage_error("--reference: " + f.path + ": case " + c + ": malformed spec: " + what);
}

inline void need_int(const library_file& f, const std::string& c, const nlohmann::json& s, const char* key) {
  if (!s.contains(key) || !s[key].is_number_integer() || s[key].get<std::int64_t>() < 1)
    malformed(f, c, std::string("\"") + key + "\" must be a whole number >= 1");
}
/// An optional true/false key (absent: false).
inline void need_bool(const library_file& f, const std::string& c, const nlohmann::json& s, const char* key) {
  if (s.contains(key) && !s[key].is_boolean()) malformed(f, c, std::string("\"") + key + "\" must be true or false");
}
inline void need_choice(const library_file& f, const std::string& c, const nlohmann::json& s, const char* key, const std::set<std::string>& ok,
                        bool required) {
  if (!s.contains(key) && !required) return;
  std::string list;
  for (const auto& o : ok) list += (list.empty() ? "" : ", ") + o;
  if (!s.contains(key) || !s[key].is_string() || !ok.count(s[key].get<std::string>()))
    malformed(f, c, std::string("\"") + key + "\" must be one of " + list);
}

/// An hf spec's config file (hf-configs/CFG next to the reference file), which must exist.
inline void need_config(const library_file& f, const std::string& c, const nlohmann::json& s) {
  if (!s.contains("cfg") || !s["cfg"].is_string()) malformed(f, c, "\"cfg\" must name a file of hf-configs/");
  const auto path = f.configs + "/" + s["cfg"].get<std::string>();
  if (!std::ifstream(path)) malformed(f, c, "\"cfg\": cannot open " + path);
}

inline void check_lora(const library_file& f, const std::string& c, const nlohmann::json& l) {
  if (!l.is_object()) malformed(f, c, "\"lora\" must be an object {r, targets}");
  need_int(f, c, l, "r");
  const bool names = l.contains("targets") && (l["targets"].is_string() || l["targets"].is_array());
  if (!names) malformed(f, c, "\"lora\".\"targets\" must be a module name list or \"all-linear\"");
  if (l["targets"].is_array())
    for (const auto& t : l["targets"])
      if (!t.is_string()) malformed(f, c, "\"lora\".\"targets\" must list names (strings)");
  if (l.contains("modules_to_save")) {
    if (!l["modules_to_save"].is_array()) malformed(f, c, "\"lora\".\"modules_to_save\" must list module names");
    for (const auto& t : l["modules_to_save"])
      if (!t.is_string()) malformed(f, c, "\"lora\".\"modules_to_save\" must list names (strings)");
  }
}

/// The keys of a training spec (tv, hf or graph) other than "batch", which `max` leaves out.
inline void check_model_keys(const library_file& f, const std::string& c, const std::string& kind, const nlohmann::json& s) {
  const std::set<std::string> precisions = {"fp32", "amp_fp16", "amp_bf16"};
  need_choice(f, c, s, "prec", precisions, true);
  if (kind == "graph") {  // an exported module: its graph file, and the factory the run built it with
    for (const char* k : {"graph", "factory"})
      if (!s.contains(k) || !s[k].is_string()) malformed(f, c, std::string("\"") + k + "\" must be a string");
    const auto path = f.graphs + "/" + s["graph"].get<std::string>();
    if (!std::ifstream(path)) malformed(f, c, "\"graph\": cannot open " + path);
    return;
  }
  if (kind == "tv") {
    if (!s.contains("model") || !s["model"].is_string()) malformed(f, c, "\"model\" must name a torchvision model");
    need_int(f, c, s, "size");
    return;
  }
  need_int(f, c, s, "seq");
  need_choice(f, c, s, "arch", {"cls", "s2s", "causal"}, false);
  need_bool(f, c, s, "padded");
  need_choice(f, c, s, "base", {"fp32", "fp16", "bf16"}, false);
  if (s.contains("ckpt") && !s["ckpt"].is_boolean() && s["ckpt"] != "reentrant")
    malformed(f, c, "\"ckpt\" must be true, false or \"reentrant\"");
  if (s.contains("lora")) check_lora(f, c, s["lora"]);
  // QLoRA (measure_real_libraries.py quantized_hf_model): bitsandbytes' storage of the base, and
  // PEFT's prepare_model_for_kbit_training; both need the adapters
  need_choice(f, c, s, "quant", {"nf4", "nf4-dq", "fp4", "int8"}, false);
  need_bool(f, c, s, "prepare_kbit");
  if ((s.contains("quant") || s.contains("prepare_kbit")) && !s.contains("lora")) malformed(f, c, "\"quant\" and \"prepare_kbit\" need \"lora\"");
  if (s.value("prepare_kbit", false) && !s.contains("quant")) malformed(f, c, "\"prepare_kbit\" prepares a quantized base: give \"quant\"");
  need_config(f, c, s);
}

inline void check_spec(const library_file& f, const std::string& c, const nlohmann::json& spec, library_case& out) {
  if (!spec.is_array() || spec.size() != 2 || !spec[0].is_string() || !spec[1].is_object())
    malformed(f, c, "expected [KIND, {...}] with KIND tv, hf, graph, gen, max or cap");
  out.kind = spec[0].get<std::string>();
  out.spec = spec[1];
  const auto& s = out.spec;
  if (out.kind == "tv" || out.kind == "hf" || out.kind == "graph") {
    need_int(f, c, s, "batch");
    check_model_keys(f, c, out.kind, s);
  } else if (out.kind == "gen") {
    need_config(f, c, s);
    for (const char* k : {"batch", "prompt", "new"}) need_int(f, c, s, k);
    need_bool(f, c, s, "padded");
  } else if (out.kind == "cap" || out.kind == "max") {  // cap: one batch under the capped device; max: the search
    need_choice(f, c, s, "kind", {"tv", "hf", "graph"}, true);
    if (out.kind == "cap") need_int(f, c, s, "batch");
    if (out.kind == "max" && s.contains("batch")) malformed(f, c, "a max spec has no \"batch\" (the batch is what it searched)");
    if (s.contains("start")) need_int(f, c, s, "start");
    check_model_keys(f, c, s["kind"].get<std::string>(), s);
  } else {
    malformed(f, c, "kind '" + out.kind + "' is not tv, hf, graph, gen, max or cap");
  }
}

inline std::string text_at(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

}  // namespace detail

/// Reads and validates a real-library file (`j`, parsed from `path`).
inline library_file read_library_file(const nlohmann::json& j, const std::string& path) {
  library_file f;
  f.path = path;
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash);
  f.configs = dir + "/hf-configs";
  f.graphs = dir + "/graphs";
  if (!j["specs"].is_object()) throw cli::usage_error("--reference: " + path + ": \"specs\" must be an object keyed by case name");
  const auto env = j.contains("environment") ? j["environment"] : nlohmann::json::object();
  f.gpu = detail::text_at(env, "gpu");
  f.alloc_conf = detail::text_at(env, "PYTORCH_CUDA_ALLOC_CONF");
  f.transformers = detail::text_at(env, "transformers");
  if (j.contains("cap_gib")) {
    if (!j["cap_gib"].is_number() || j["cap_gib"].get<double>() <= 0) throw cli::usage_error("--reference: " + path + ": \"cap_gib\" must be a positive number");
    f.cap_gib = j["cap_gib"].get<double>();
  }
  for (const auto& [name, fields] : j["cases"].items()) {
    library_case c;
    c.name = name;
    if (!fields.is_object()) throw cli::usage_error("--reference: " + path + ": case " + name + ": its fields must be an object");
    if (!j["specs"].contains(name)) throw cli::usage_error("--reference: " + path + ": case " + name + " has no spec in \"specs\"");
    detail::check_spec(f, name, j["specs"][name], c);
    for (const auto& [k, v] : fields.items()) {
      if (v.is_null()) c.measured[k] = std::nullopt;
      else if (v.is_number_integer()) c.measured[k] = v.get<std::int64_t>();
      else if (v.is_boolean()) c.measured[k] = v.get<bool>() ? 1 : 0;  // a cap case's "ok"
      else if (v.is_number_float()) c.measured[k] = static_cast<std::int64_t>(v.get<double>());
    }
    f.cases.push_back(std::move(c));
  }
  return f;
}

/// The one place the file's PYTORCH_CUDA_ALLOC_CONF reaches the estimate: the caching allocator
/// model, with the settings the run had (as the CLI's --alloc-conf gives them). A setting the
/// model does not know is a usage error naming it.
inline allocator_settings file_allocator_settings(const std::string& conf) {
  if (conf.empty()) return {};
  try {
    return alloc_conf(conf);
  } catch (const std::invalid_argument& e) {
    throw cli::usage_error(std::string("the file's PYTORCH_CUDA_ALLOC_CONF: ") + e.what());
  }
}
inline void apply_alloc_conf(training& t, const std::string& conf) {
  t.model_allocator = true;
  t.allocator = file_allocator_settings(conf);
}

/// A case the estimator can run: the zoo entry, its sizes and the training step.
struct built_case {
  zoo_entry entry;
  model_options options;
  training plan{};
  std::optional<models::parameter_counts> peft;  ///< PEFT's counts of a LoRA case
};

/// Thrown for a well-formed spec the estimator cannot express yet (listed, not checked).
struct not_expressible {
  std::string why;
};

namespace detail {

inline precision_mode precision_of(const std::string& p) { return p == "amp_fp16" ? amp_fp16 : p == "amp_bf16" ? amp_bf16 : fp32; }

/// The step the script runs: AdamW (PyTorch's CUDA default, foreach), cross-entropy, on CUDA.
inline training step_of(const nlohmann::json& s, std::int64_t batch) {
  training t = for_runtime(training{}, runtime_kind::torch2_cuda);
  t.batch = batch;
  t.optimizer = adamw;
  t.step = step_impl::foreach;
  t.loss = loss_kind::cross_entropy;
  t.output_held = false;  // loss_fn: ce(m(x), y) or m(input_ids=..., labels=...).loss: the output is not kept
  t.precision = precision_of(s["prec"].get<std::string>());
  // gradient_checkpointing_enable(): every decoder layer. use_reentrant=True (CheckpointFunction:
  // the layer runs under no_grad, its input saved; backward re-runs it with grad and back-propagates
  // through the re-run) holds what the non-reentrant hooks hold: real-libraries-h200.json's
  // reentrant TinyLlama b4 t2048 (fp32 weights, and again with bf16 weights beside the
  // non-reentrant run: 11,074,491,904 against 11,074,999,808 B) is within 0.01 % of its live
  // peak with the same rules.
  t.checkpoint_blocks = s.contains("ckpt") && (s["ckpt"].is_string() || s["ckpt"].get<bool>());
  // the steps each run trained (measure_real_libraries.py: STEPS = 3, a spec's "steps" for the
  // longer capped trials): a capped job can run out of memory in a later step (op_rules.md A19)
  t.steps = s.contains("steps") ? s["steps"].get<std::int32_t>() : 3;
  return t;
}

/// PEFT's LoRA on an hf config of the Llama family (bf16 or other frozen base).
inline void apply_lora(built_case& b, const std::string& path, const std::string& model_type, const nlohmann::json& s) {
  const std::set<std::string> llama_family = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "olmo2", "olmo3", "granite", "phi3"};
  if (!llama_family.count(model_type)) throw not_expressible{"LoRA on model_type " + model_type + " (the zoo's LoRA is the Llama family's)"};
  std::ifstream in(path);
  const auto config = nlohmann::json::parse(in);
  // the family's own reader (Gemma 3's and OLMo 2's layers are not llama_family_config's)
  auto g = tools::detail::llama_from(hf::read_config(config, path).model.llama, b.options);
  if (g.sliding_window > g.context) g.sliding_window = g.context;
  const auto& l = s["lora"];
  std::string targets;
  if (l["targets"].is_string()) targets = l["targets"].get<std::string>();
  else
    for (const auto& t : l["targets"]) targets += (targets.empty() ? "" : ",") + t.get<std::string>();
  models::lora_config lc{};
  lc.rank = l["r"].get<std::int64_t>();
  lc.dora = l.value("dora", false);
  if (l.contains("modules_to_save")) {
    std::string saved;
    for (const auto& t : l["modules_to_save"]) saved += (saved.empty() ? "" : ",") + t.get<std::string>();
    try {
      lc.modules_to_save = tools::parse_modules_to_save(saved);
    } catch (const cli::usage_error& e) {
      throw not_expressible{e.what()};
    }
  }
  try {
    lc.targets = parse_lora_targets(targets);
  } catch (const std::invalid_argument&) {
    throw not_expressible{"LoRA targets '" + targets + "'"};
  }
  const auto base = s.value("base", std::string()), quant = s.value("quant", std::string());
  lc.base = base == "bf16" ? base_weights::bf16 : base == "fp16" ? base_weights::fp16 : base == "fp32" ? base_weights::fp32 : base_weights::same;
  if (!quant.empty())  // bitsandbytes' storage (the unquantized modules stay in the base's 16 bits: unquantized_modules)
    lc.base = quant == "nf4" ? base_weights::nf4 : quant == "nf4-dq" ? base_weights::nf4_dq : quant == "fp4" ? base_weights::fp4 : base_weights::int8;
  lc.kbit_prepared = s.value("prepare_kbit", false);
  try {
    tools::apply_kbit_preparation(lc, b.plan);
    auto run = tools::lora_model(b.entry, g, std::nullopt, lc);
    b.entry = std::move(run.entry);
    b.peft = run.counts;
  } catch (const cli::usage_error& e) {
    throw not_expressible{e.what()};
  }
}

/// A full fine-tune of a model whose weights are 16-bit (the spec's "base" without LoRA): the
/// optimizer updates them directly (training::master_weights = false, AdamW's state 16-bit too).
/// Autocast over 16-bit weights casts nothing; what it still runs in fp32 (softmax, norms) is
/// budgeted only for decoders whose transformers code upcasts those itself (RMSNorm, the
/// loss's logits.float(), SDPA): the Llama family.
inline void train_16_bit_weights(built_case& b, const nlohmann::json& s, const hf_model& m) {
  const auto w = s.value("base", std::string());
  if (w != "bf16" && w != "fp16") return;
  if (!b.entry.llama) throw not_expressible{"16-bit weights of model_type " + m.model_type + " under autocast (its fp32 ops are budgeted for the Llama family)"};
  b.plan.precision = w == "bf16" ? pure_bf16 : pure_fp16;
  b.plan.master_weights = false;
}

/// An hf spec: the --hf-config builder's model, the task its arch names.
inline built_case build_hf(const library_file& f, const nlohmann::json& s, std::int64_t batch) {
  const auto path = f.configs + "/" + s["cfg"].get<std::string>();
  const auto arch = s.value("arch", std::string("causal"));
  // the script's AutoModelFor{SequenceClassification,Seq2SeqLM,CausalLM}: the head as --task names it
  const auto task = arch == "cls" ? models::hf_task::seq_cls : arch == "s2s" ? models::hf_task::seq2seq : models::hf_task::causal_lm;
  hf_model m;
  try {
    m = from_hf_config(path, task, f.transformers);
  } catch (const std::invalid_argument& e) {
    throw not_expressible{e.what()};
  }
  built_case b{m.entry, {}, step_of(s, batch), std::nullopt};
  b.options.values["seq"] = s["seq"].get<std::int64_t>();  // t5: the labels (input_ids) have the same length
  // the decoders' loss is ForCausalLMLoss (logits.float() first); T5's and BERT's heads call
  // CrossEntropyLoss on the logits as they are
  if (task == models::hf_task::causal_lm) b.plan.loss = loss_kind::causal_lm;
  if (s.value("padded", false)) {  // the script's padded batch: attention_mask with zeros (--padded-batch)
    if (!takes_attention_mask(m.entry))
      throw not_expressible{"a padded batch of model_type " + m.model_type + " (modelled for the Llama family, BERT, GPT-2 and T5)"};
    if (!m.entry.padded_batch_unmodelled.empty()) throw not_expressible{m.entry.padded_batch_unmodelled};
    b.options.values[padded_batch_option] = 1;
  }
  if (s.contains("lora")) apply_lora(b, path, m.model_type, s);
  else train_16_bit_weights(b, s, m);
  return b;
}

}  // namespace detail

namespace detail {
/// A gen spec: generate() of `new` tokens after `prompt` for `batch` sequences, the config's
/// model in its torch_dtype (bf16 if none), as serving_engine::hf budgets it. The file's
/// alloc_peak is max_memory_allocated over generate (weights, cache, workspace and the one
/// cuBLAS workspace of an inference process); reserved_peak max_memory_reserved (the caching
/// allocator model's replay of the prefill and the decode steps, with the file's
/// PYTORCH_CUDA_ALLOC_CONF); its device_used the process's whole footprint.
inline std::vector<std::pair<std::string, std::int64_t>> estimate_generate(const library_file& f, const nlohmann::json& s, const device& measured) {
  hf_model m;
  try {
    m = from_hf_config(f.configs + "/" + s["cfg"].get<std::string>(), models::hf_task::causal_lm, f.transformers);  // AutoModelForCausalLM
  } catch (const std::invalid_argument& e) {
    throw not_expressible{e.what()};
  }
  if (!m.entry.llama) throw not_expressible{"generate() of model_type " + m.model_type + " (the hf engine serves the Llama family)"};
  const auto prompt = s["prompt"].get<std::int64_t>(), fresh = s["new"].get<std::int64_t>();
  auto g = *m.entry.llama;
  if (s.value("padded", false)) g.padded_batch = true;  // left-padded prompts
  serving v{};
  v.context = prompt + fresh, v.generated = fresh, v.concurrency = s["batch"].get<std::int64_t>(), v.engine = serving_engine::hf;
  v.model_allocator = true, v.allocator = file_allocator_settings(f.alloc_conf);
  v.precision = m.torch_dtype == "float32" ? fp32 : m.torch_dtype == "float16" ? pure_fp16 : pure_bf16;
  v.kv = m.torch_dtype == "float32" ? dtype::fp32 : m.torch_dtype == "float16" ? dtype::fp16 : dtype::bf16;
  if (g.context < v.context) throw not_expressible{"a context beyond the model's positions"};
  const auto b = m.entry.experts ? serve(g, *m.entry.experts, v, measured) : serve(g, v, measured);
  const auto allocated = b.weights + b.workspace + b.kv_cache_bytes + b.cublas_workspace;
  return {{"params", b.parameter_count}, {"alloc_peak", allocated}, {"reserved_peak", b.reserved_peak}, {"device_used", b.total()}};
}
}  // namespace detail

/// The estimator's model of a tv, hf or graph spec (or a max spec's model) at `batch`.
inline built_case build(const library_file& f, const std::vector<zoo_entry>& zoo, const std::string& kind, const nlohmann::json& s, std::int64_t batch) {
  if (kind == "hf") return detail::build_hf(f, s, batch);
  if (kind == "graph") {  // measure_real_libraries.py graph_job: the loss (out ** 2).mean(), or the model's own
    built_case b{graph_entry(f.graphs + "/" + s["graph"].get<std::string>()), {}, detail::step_of(s, batch), std::nullopt};
    b.plan.loss = loss_kind_named(b.entry.default_loss);  // the file's "loss" (--targets): model(ids, ids)'s, the logits dropped
    return b;
  }
  const auto model = s["model"].get<std::string>();
  for (const auto& e : zoo)
    if (e.name == model && e.family == "image") {
      built_case b{e, {}, detail::step_of(s, batch), std::nullopt};
      b.options.values["image-size"] = s["size"].get<std::int64_t>();
      return b;
    }
  throw not_expressible{"torchvision model '" + model + "' is not in the zoo"};
}

inline budget_view run_view(const built_case& b, const training& t, const device& d) {
  try {
    return view_of(b.entry.run(b.options, t, d).budget);
  } catch (const std::invalid_argument& e) {
    throw not_expressible{e.what()};
  }
}

/// The largest batch whose budget fits `d` (0 if none): doubling, then bisection, as the
/// measurement searched (fits() is monotone in the batch).
inline std::int64_t largest_fitting_batch(const built_case& b, const device& d) {
  auto fits_at = [&](std::int64_t batch) {
    training t = b.plan;
    t.batch = batch;
    return run_view(b, t, d).fits;
  };
  if (!fits_at(1)) return 0;
  std::int64_t ok = 1, bad = 2;
  while (bad <= (std::int64_t{1} << 20) && fits_at(bad)) ok = bad, bad *= 2;
  if (bad > (std::int64_t{1} << 20)) return ok;
  while (bad - ok > 1) {
    const auto mid = ok + (bad - ok) / 2;
    (fits_at(mid) ? ok : bad) = mid;
  }
  return ok;
}

/// The estimated fields of one case. `cuda_fields` is the CLI's reading of a budget's device
/// side (reserved_peak_bytes, device_total_fresh_bytes: estimate.cpp's cuda_device_fields), so
/// that both CUDA references are held to the same definitions.
using device_reading = std::function<std::map<std::string, std::int64_t>(const budget_view&)>;

inline std::vector<std::pair<std::string, std::int64_t>> estimate(const library_file& f, const library_case& c, const std::vector<zoo_entry>& zoo,
                                                                  const device& measured, const device_reading& cuda_fields) {
  if (c.kind == "gen") return detail::estimate_generate(f, c.spec, measured);
  const auto& spec = c.spec;
  if (c.kind == "cap" || c.kind == "max") {
    const bool one_batch = c.kind == "cap";  // did this batch train, or the largest that does
    auto b = build(f, zoo, c.spec["kind"].get<std::string>(), c.spec, one_batch ? c.spec["batch"].get<std::int64_t>() : 1);
    apply_alloc_conf(b.plan, f.alloc_conf);
    device d = measured;  // --memory-gib CAP on the measured GPU: its context and workspaces
    d.capacity = static_cast<std::int64_t>(f.cap_gib * static_cast<double>(GiB));
    if (one_batch) return {{"ok", run_view(b, b.plan, d).fits ? 1 : 0}};
    return {{"largest_ok", largest_fitting_batch(b, d)}};
  }
  auto b = build(f, zoo, c.kind, spec, spec["batch"].get<std::int64_t>());
  apply_alloc_conf(b.plan, f.alloc_conf);
  // a GradScaler that skipped every optimizer.step() (its scaled gradients overflowed at the
  // initial scale): the run never allocated AdamW's state nor its step's temporaries, so the
  // step it ran is budgeted, an update in place (measure_real_libraries.py records it since call 9)
  if (const auto it = c.measured.find("optimizer_state_allocated"); it != c.measured.end() && it->second == 0) b.plan.optimizer = sgd;
  auto v = run_view(b, b.plan, measured);
  const auto dev = cuda_fields(v);
  // max_memory_allocated: whole blocks, from the caching allocator model's replay of the steps
  // (op_rules.md A10), as the 77-case check reads its peaks. Without the model: the live tensors
  // at the peak (resident + step peak) and the cuBLAS workspaces the allocator holds.
  const auto allocated = v.allocator_modelled ? v.allocated_total_peak
                                              : v.live_tensor_bytes_at_peak + cublas_handles_in_a_training_step * v.cublas_workspace;
  return {{"params", v.parameter_count},
          {"trainable", v.trainable_count},
          {"alloc_peak", allocated},
          {"reserved_peak", dev.at("reserved_peak_bytes")},
          {"device_used", dev.at("device_total_fresh_bytes")}};
}

}  // namespace gpubudget::tools::real_libraries
