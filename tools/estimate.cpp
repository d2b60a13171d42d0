// gpubudget — the command-line front door: budgets any zoo model for a training (or inference)
// configuration on one or several GPUs, and holds the estimates against measured PyTorch steps
// (`--reference FILE --check`). Built as the target gpubudget_estimate, installed as `gpubudget`,
// reached from a checkout through scripts/estimate.
//
//   gpubudget resnet50 --batch 32 --optimizer sgd_momentum --device v100_16gb
//   gpubudget llama-2-7b --seq 2048 --precision amp_bf16 --devices t4,a100_80gb,h100_80gb
//   gpubudget gpt --layers 24 --d-model 1024 --heads 16 --seq 512 --json
//   gpubudget --reference benchmarks/accuracy/reference/pytorch-1.13-cpu.json --check
//
// Exit status: 0 ok (and fits, with --require-fit), 1 does not fit (only with --require-fit),
// 2 bad input (one line on stderr starting with "gpubudget: ", nothing on stdout).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <gpubudget/svg.hpp>
#include <nlohmann/json.hpp>

#include "budget_view.hpp"
#include "cli_args.hpp"
#include "cli_options.hpp"
#include "cli_output.hpp"
#include "distributed_cli.hpp"
#include "llm_cli.hpp"
#include "graph_source.hpp"
#include "hf_cli.hpp"
#include "hf_config.hpp"
#include "real_library_reference.hpp"
#include "reference_check.hpp"
#include "run_config.hpp"
#include "zoo_registry.hpp"

using namespace gpubudget;
using gpubudget::cli::usage_error;
using namespace gpubudget::tools::reference_check;
using gpubudget::tools::find_model;
using gpubudget::tools::run_config;
using gpubudget::tools::describe_config;
using gpubudget::tools::print_csv;
using gpubudget::tools::print_json;
using gpubudget::tools::serving_json;
using gpubudget::tools::side_by_side;
using gpubudget::tools::write_svg;
using gpubudget::tools::runtime_of;
using gpubudget::tools::all_options;
using gpubudget::tools::parse_device;
using gpubudget::tools::print_help;

namespace {

// ---------------------------------------------------------------------------------------------
// A configuration from the command line (run_config.hpp), step by step.

std::deque<std::string>& name_storage() {  // device names outlive the budgets that view them
  static std::deque<std::string> s;
  return s;
}

std::string fmt_gib(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// --hf-config FILE [--task T]: the model a transformers config.json describes (hf_cli.hpp).
const tools::zoo_entry* hf_entry(const cli::parsed_args& a, std::string& label, std::string& torch_dtype) {
  const auto* e = tools::load_hf_entry("--hf-config", *a.get("hf-config"), tools::parse_task(a), &a, &torch_dtype);
  label = e->name;
  return e;
}

/// --graph FILE: the file's model joins the zoo under a name no zoo model has, and the arguments
/// name it as the model (every other option then applies as to a zoo model).
cli::parsed_args with_graph_model(cli::parsed_args a, std::vector<tools::zoo_entry>& zoo) {
  if (!a.has("graph")) return a;
  if (!a.positionals.empty()) throw usage_error("unexpected argument '" + a.positionals[0] + "' with --graph (the graph file is the model)");
  if (a.has("hf-config")) throw usage_error("--graph does not combine with --hf-config (one model at a time)");
  for (const auto& [family, sizes] : tools::families())
    for (const auto& o : sizes)
      if (a.has(o.name)) throw usage_error("--" + o.name + " does not apply to --graph: the file fixes every size (export it again, e.g. with another --input)");
  try {
    zoo.insert(zoo.begin(), tools::graph_entry(*a.get("graph")));
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
  zoo.front().name += " (graph)";
  a.positionals.push_back(zoo.front().name);
  if (!zoo.front().default_loss.empty() && !a.has("loss") && !a.has("inference")) {  // the file's model computes its own loss
    a.values["loss"] = zoo.front().default_loss;
    a.order.push_back("loss");
  }
  a.values.erase("graph");
  a.order.erase(std::find(a.order.begin(), a.order.end(), "graph"));
  return a;
}

// configure()'s steps: each reads its flags into the run's configuration.

/// The model: a zoo name, a reference case's name (which also sets sizes, batch and step) or
/// --hf-config; returns the batch a reference case sets (1 otherwise).
std::int64_t configure_model(const cli::parsed_args& a, const std::vector<tools::zoo_entry>& zoo, run_config& c) {
  const auto has = [&](const char* n) { return a.has(n); };
  if (has("hf-config") && !a.positionals.empty())
    throw usage_error("unexpected argument '" + a.positionals[0] + "' with --hf-config (the config file is the model)");
  if (a.positionals.empty() && !has("hf-config")) throw usage_error("no model given (gpubudget --help lists the models)");
  if (a.positionals.size() > 1) throw usage_error("unexpected argument '" + a.positionals[1] + "' (one model at a time; options start with --)");
  c.model_arg = has("hf-config") ? "" : a.positionals[0];
  std::string model = c.model_arg;
  std::int64_t batch = 1;
  for (const auto& rc : tools::reference_cases()) {
    if (rc.name != c.model_arg) continue;
    model = rc.model;
    c.opts = rc.options;
    batch = rc.batch;
    c.plan.optimizer = rc.optimizer;
    c.optimizer = rc.optimizer == sgd ? "sgd" : rc.optimizer == sgd_momentum ? "sgd_momentum" : rc.optimizer == adam ? "adam" : "adamw";
    c.train_only = rc.train_only;
    c.plan.checkpoint_blocks = rc.checkpoint_blocks;
  }
  c.entry = has("hf-config") ? hf_entry(a, c.model_arg, c.hf_torch_dtype) : find_model(zoo, model);
  if (!c.entry) {
    std::vector<std::string> names;
    for (const auto& e : zoo) names.push_back(e.name);
    for (const auto& rc : tools::reference_cases()) names.push_back(rc.name);
    throw usage_error("unknown model '" + c.model_arg + "'" + cli::did_you_mean(c.model_arg, names) + " (gpubudget --help lists the models)");
  }
  return batch;
}

/// --padded-batch and --attention-mask name transformers' attention_mask (tools::takes_attention_mask);
/// the zoo's gpt models are the project's reference GPT, not transformers'.
void require_transformers_masks(const run_config& c, const std::string& flag) {
  const bool from_hf = c.entry->name.rfind("hf:", 0) == 0;
  if (c.entry->family == "gpt" && !from_hf)
    throw usage_error("--" + flag + ": " + c.model_arg + " is the project's reference GPT, which takes no attention mask; transformers' GPT-2 "
                      "is --hf-config with its config.json");
  if (!tools::takes_attention_mask(*c.entry))
    throw usage_error("--" + flag + ": " + c.model_arg + " is not a Llama-family decoder, BERT, GPT-2 or T5 (transformers' attention masks are modelled for those only)");
  if (flag == tools::padded_batch_option && !c.entry->padded_batch_unmodelled.empty())
    throw usage_error("--" + flag + ": " + c.model_arg + ": " + c.entry->padded_batch_unmodelled);
}

/// Size options: only those of the model's family, each in its range; the family's own limits.
void configure_sizes(const cli::parsed_args& a, run_config& c) {
  const auto val = [&](const char* n) { return *a.get(n); };
  const auto fam = tools::families();
  const auto& mine = fam.at(c.entry->family);
  for (const auto& name : a.order) {
    std::vector<std::string> takers;
    for (const auto& [f, opts] : fam)
      for (const auto& o : opts)
        if (o.name == name) takers.push_back(f);
    if (takers.empty()) continue;  // a general option
    const auto it = std::find_if(mine.begin(), mine.end(), [&](const tools::size_option& o) { return o.name == name; });
    if (it == mine.end()) {
      std::string t, own;
      for (const auto& f : takers) t += (t.empty() ? "" : ", ") + f;
      for (const auto& o : mine) own += (own.empty() ? "--" : ", --") + o.name;
      throw usage_error("--" + name + " is not an option of " + c.model_arg + " (" + (c.entry->family == "image" ? "an " : "a ") + c.entry->family + " model, which takes " + own +
                        "); --" + name + " belongs to the " + t + " models");
    }
    c.opts.values[name] = cli::parse_integer("--" + name, val(name.c_str()), it->lo, it->hi);
  }
  for (const auto& flag : {tools::padded_batch_option, tools::attention_mask_option})
    if (a.has(flag.c_str())) {
      require_transformers_masks(c, flag);
      c.opts.values[flag] = 1;
    }
  if (c.entry->max_seq) {
    const auto max = c.entry->max_seq(c.opts);
    const bool given = c.opts.values.count("seq") != 0;
    std::int64_t seq = c.opts.get("seq", -1);
    if (!given) {  // the default sequence: the model's own (gpt: 1024)
      if (c.entry->family == "gpt") seq = 1024;
    }
    const std::string why = c.entry->family == "gpt" ? (c.opts.values.count("ctx") ? "--ctx " + std::to_string(max) : "its " + std::to_string(max) + " learned positions (--ctx)")
                                                     : "its " + std::to_string(max) + " positions (max_position_embeddings)";
    if (seq > max)
      throw usage_error("--seq: " + std::to_string(seq) + (given ? "" : " (the default)") + " is longer than " + c.model_arg + " allows: " + why +
                        "; expected 1 to " + std::to_string(max));
  }
  if (c.entry->family == "gpt") {
    const auto width = c.opts.get("d-model", 768), heads = c.opts.get("heads", 12);
    if (width % heads != 0)
      throw usage_error("--heads: " + std::to_string(heads) + " does not divide --d-model " + std::to_string(width) + " (each head gets d-model/heads features)");
  }
  if (c.entry->family == "bev") {
    const auto ch = c.opts.get("channels", 64), heads = c.opts.get("heads", 4);
    if (ch % heads != 0) throw usage_error("--heads: " + std::to_string(heads) + " does not divide --channels " + std::to_string(ch));
  }
}

/// --runtime, and the flags --json's CPU reference step allows.
void configure_runtime(const cli::parsed_args& a, run_config& c) {
  const auto has = [&](const char* n) { return a.has(n); };
  const auto val = [&](const char* n) { return *a.get(n); };
  c.legacy_json = has("json") && !has("serve");  // --serve --json: the serving fields (run_serve)
  c.require_fit = has("require-fit");
  if (has("runtime")) {
    c.runtime = cli::parse_choice("--runtime", val("runtime"), {"torch1.13-cpu", "torch2.6-cpu", "torch2-cuda"});
    c.plan = for_runtime(c.plan, runtime_of(c.runtime));
  }
  if (c.legacy_json) {
    if (c.runtime == "torch2-cuda")
      throw usage_error("--runtime torch2-cuda does not combine with --json (the reference fields of a CPU step: torch1.13-cpu or torch2.6-cpu; use --format json for a CUDA budget)");
    // 2.6 CPU: the reference cases also vary the precision (fp32 | amp_bf16 autocast) and step()
    const bool v26 = c.runtime == "torch2.6-cpu";
    std::set<std::string> allowed = {"json", "batch", "optimizer", "checkpoint-blocks", "freeze-all-but", "runtime", "lora", "quant", "hf-config", "task"};
    if (v26) allowed.insert({"precision", "step", "loss"});  // a model's own loss (an exported nanoGPT's), measured in 2.6
    const auto fam = tools::families();
    const auto& mine = fam.at(c.entry->family);
    for (const auto& n : a.order) {
      bool size = false;
      for (const auto& o : mine) size = size || o.name == n;
      if (!size && !allowed.count(n) && n == "loss")
        throw usage_error("--loss (or a graph file's own loss) combines with --json only under --runtime torch2.6-cpu (the reference step of 1.13 is (out**2).mean())");
      if (!size && !allowed.count(n))
        throw usage_error("--" + n + " does not combine with --json (an fp32 CPU reference step; use --format json for a GPU budget)");
    }
    if (v26 && has("precision") && val("precision") != "fp32" && val("precision") != "amp_bf16")
      throw usage_error("--precision " + val("precision") + " does not combine with --json --runtime torch2.6-cpu (measured: fp32, amp_bf16 = CPU autocast bf16)");
  }
}

/// The step: batch, micro-batch, precision, optimizer, step(), loss and what the trainer keeps.
void configure_step(const cli::parsed_args& a, run_config& c, std::int64_t batch) {
  const auto has = [&](const char* n) { return a.has(n); };
  const auto val = [&](const char* n) { return *a.get(n); };
  if (has("batch")) batch = cli::parse_integer("--batch", val("batch"), 1, 1 << 20);
  c.plan.batch = batch;
  if (has("micro-batch")) {
    const auto m = cli::parse_integer("--micro-batch", val("micro-batch"), 1, 1 << 20);
    if (m > batch) throw usage_error("--micro-batch: " + std::to_string(m) + " is larger than --batch " + std::to_string(batch) + "; expected 1 to " + std::to_string(batch));
    if (batch % m != 0)
      throw usage_error("--micro-batch: " + std::to_string(m) + " does not divide --batch " + std::to_string(batch) + " (accumulation needs equal micro-batches)");
    c.plan.micro_batch = m;
  }
  if (has("precision")) {
    c.precision = cli::parse_choice("--precision", val("precision"), {"fp32", "amp_fp16", "amp_bf16", "fp16", "bf16"});
    const std::map<std::string, precision_mode> p = {{"fp32", fp32}, {"amp_fp16", amp_fp16}, {"amp_bf16", amp_bf16}, {"fp16", pure_fp16}, {"bf16", pure_bf16}};
    c.plan.precision = p.at(c.precision);
  }
  if (has("optimizer")) {
    c.optimizer = cli::parse_choice("--optimizer", val("optimizer"), {"sgd", "sgd_momentum", "adam", "adamw", "adam8bit", "adamw8bit"});
    const std::map<std::string, optimizer_kind> o = {{"sgd", sgd},           {"sgd_momentum", sgd_momentum}, {"adam", adam},
                                                     {"adamw", adamw},       {"adam8bit", adam8bit},         {"adamw8bit", adamw8bit}};
    c.plan.optimizer = o.at(c.optimizer);
    if (c.legacy_json && is_8bit(c.plan.optimizer))
      throw usage_error("--optimizer " + c.optimizer + " does not combine with --json (a CPU reference step; bitsandbytes' 8-bit optimizers run on CUDA; use --format json)");
  }
  if (has("step")) {
    c.step = cli::parse_choice("--step", val("step"), {"for_loop", "foreach", "fused"});
    c.plan.step = c.step == "for_loop" ? step_impl::for_loop : c.step == "fused" ? step_impl::fused : step_impl::foreach;
  }
  if (has("loss")) {
    c.loss = cli::parse_choice("--loss", val("loss"), {"mean_square", "cross_entropy", "causal_lm"});
    c.plan.loss = tools::loss_kind_named(c.loss);
  }
  c.plan.ema = has("ema");
  if (has("no-master-weights")) {
    if (c.plan.precision != pure_fp16 && c.plan.precision != pure_bf16)
      throw usage_error("--no-master-weights needs --precision fp16 or bf16 (16-bit parameters; with fp32 or AMP the parameters are fp32 and there is no master copy)");
    if (has("gpus")) throw usage_error("--no-master-weights is not modelled in the parallel layouts of --gpus (ZeRO, FSDP and Megatron keep fp32 master weights)");
    if (has("lora"))
      throw usage_error("--no-master-weights is a full fine-tune of 16-bit weights; with --lora the frozen base's type is --lora base=bf16|fp16 (PEFT keeps the adapters in fp32)");
    c.plan.master_weights = false;
  }
  c.plan.output_held = !has("drop-output");
  c.plan.inference = has("inference");
}

/// Checkpointing, freezing, the allocator model, and the teacher.
void configure_policy(const cli::parsed_args& a, const std::vector<tools::zoo_entry>& zoo, run_config& c) {
  const auto has = [&](const char* n) { return a.has(n); };
  const auto val = [&](const char* n) { return *a.get(n); };
  if (has("checkpoint-all")) c.plan.checkpoint_all = true;
  if (has("checkpoint-blocks")) c.plan.checkpoint_blocks = true;
  if (has("freeze-all-but") && has("freeze-all")) throw usage_error("--freeze-all-but and --freeze-all contradict each other (give one)");
  if (has("freeze-all-but")) {
    c.freeze_prefixes = cli::split_list("--freeze-all-but", val("freeze-all-but"));
    c.train_only = val("freeze-all-but");
  } else if (!c.train_only.empty()) {
    c.freeze_prefixes = cli::split_list("--freeze-all-but", c.train_only);
  }
  if (!c.train_only.empty()) c.plan.train_only = nullptr;  // set after c is in place (storage)
  c.plan.freeze_all = has("freeze-all");
  if (has("fragmentation")) c.plan.fragmentation_percent = cli::parse_integer("--fragmentation", val("fragmentation"), 0, 100);
  // the caching allocator model (training::model_allocator) unless a flat reserve is asked for
  c.plan.model_allocator = !has("fragmentation");
  if (has("steps") && has("fragmentation")) throw usage_error("--steps sets the steps the caching allocator model replays; --fragmentation replaces the model: give one");
  // A job runs many steps: unless --steps says, the replay runs them until one makes and frees no
  // segment (training::steps = 0, budget.hpp's long_job_steps; op_rules.md A19).
  if (has("steps")) c.plan.steps = static_cast<std::int32_t>(cli::parse_integer("--steps", val("steps"), 1, gpubudget::detail::long_job_steps));
  if (has("alloc-conf") && has("fragmentation")) throw usage_error("--alloc-conf configures the caching allocator model; --fragmentation replaces it with a flat reserve: give one");
  if (has("alloc-conf")) {
    try {
      c.plan.allocator = alloc_conf(val("alloc-conf"));
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("--alloc-conf: ") + e.what());
    }
  }
  if (c.plan.inference) {
    for (const char* n : {"micro-batch", "optimizer", "step", "ema", "checkpoint-all", "checkpoint-blocks", "freeze-all-but", "freeze-all", "teacher", "loss", "drop-output"})
      if (has(n)) throw usage_error(std::string("--") + n + " does not apply with --inference (a forward pass under no_grad)");
  }
  if (has("teacher")) {
    const auto t = val("teacher");
    c.teacher = tools::names_a_config(t) ? tools::load_hf_entry("--teacher", t, std::nullopt, nullptr) : find_model(zoo, t);
    if (!c.teacher) {
      std::vector<std::string> names;
      for (const auto& e : zoo) names.push_back(e.name);
      throw usage_error("--teacher: unknown model '" + t + "'" + cli::did_you_mean(t, names) + " (gpubudget --help lists the models)");
    }
  }
  if (has("teacher-offload") && !has("teacher")) throw usage_error("--teacher-offload needs --teacher MODEL");
  c.teacher_offload = has("teacher-offload");

}

/// The devices: --device, --devices, --memory-gib, --context-mib and bf16 support.
void configure_devices(const cli::parsed_args& a, run_config& c) {
  const auto has = [&](const char* n) { return a.has(n); };
  const auto val = [&](const char* n) { return *a.get(n); };
  if (has("device") && has("devices")) throw usage_error("--device and --devices contradict each other (give one)");
  if (has("devices") && has("memory-gib")) throw usage_error("--memory-gib sets one device's capacity; it does not combine with --devices");
  if (c.legacy_json) {
    c.devices = {devices::a100_80gb};  // unused by the CPU reference step's fields
  } else if (has("devices")) {
    for (const auto& k : cli::split_list("--devices", val("devices"))) c.devices.push_back(parse_device("--devices", k));
    for (std::size_t i = 0; i < c.devices.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (c.devices[i].id == c.devices[j].id) throw usage_error("--devices: " + std::string(c.devices[i].name) + " is listed twice");
  } else if (has("device")) {
    c.devices = {parse_device("--device", val("device"))};
  } else if (has("memory-gib")) {
    c.devices = {custom_device("custom", 0)};
  } else {
    c.devices = {devices::v100_16gb};
  }
  if (has("memory-gib")) {
    const double gib = cli::parse_number("--memory-gib", val("memory-gib"), 0.0, 65536.0, true);
    auto& d = c.devices.front();
    name_storage().push_back(has("device") ? std::string(d.name) + " (" + fmt_gib(gib) + " GiB)" : "custom " + fmt_gib(gib) + " GiB");
    d.name = name_storage().back();
    d.capacity = static_cast<std::int64_t>(gib * static_cast<double>(GiB));
    if (d.capacity <= 0) throw usage_error("--memory-gib: " + val("memory-gib") + " is less than one byte; expected a number greater than 0");
  }
  if (has("context-mib")) {
    const auto mib = cli::parse_integer("--context-mib", val("context-mib"), 0, 65536);
    for (auto& d : c.devices) d.context = mib * MiB;
  }
  const bool bf16 = c.plan.precision == amp_bf16 || c.plan.precision == pure_bf16;
  if (has("allow-emulated-bf16") && !bf16)
    throw usage_error("--allow-emulated-bf16 applies only with --precision amp_bf16 or bf16 (got " + c.precision + ")");
  c.plan.emulated_bf16 = has("allow-emulated-bf16");
  if (bf16 && !has("allow-emulated-bf16")) {
    for (const auto& d : c.devices) {
      if (d.compute_capability > 0 && d.compute_capability < 80) {
        char cc[16];
        std::snprintf(cc, sizeof cc, "%d.%d", d.compute_capability / 10, d.compute_capability % 10);
        throw usage_error("--precision " + c.precision + " on " + std::string(d.name) + ": compute capability " + cc +
                          " has no bf16 support (it needs 8.0, Ampere or newer; PyTorch refuses or emulates bf16 there); use amp_fp16 or fp16, "
                          "another device, or --allow-emulated-bf16 to budget it anyway");
      }
    }
  }
}

run_config configure(const cli::parsed_args& a, const std::vector<tools::zoo_entry>& zoo) {
  run_config c;
  const std::int64_t batch = configure_model(a, zoo, c);
  configure_sizes(a, c);
  configure_runtime(a, c);
  configure_step(a, c, batch);
  configure_policy(a, zoo, c);
  configure_devices(a, c);
  if (a.has("format")) c.format = cli::parse_choice("--format", *a.get("format"), {"md", "csv", "json"});
  return c;
}

std::string strip_prefix(std::string s) {
  const std::string p = "gpubudget: ";
  return s.rfind(p, 0) == 0 ? s.substr(p.size()) : s;
}

/// Runs a zoo model; the library's std::invalid_argument (a size it cannot build) becomes a
/// usage error naming the model.
tools::evaluation run_model(const tools::zoo_entry& e, const std::string& label, const tools::model_options& o, const training& t, const device& d) {
  try {
    return e.run(o, t, d);
  } catch (const std::invalid_argument& ex) {
    throw usage_error(label + ": " + strip_prefix(ex.what()) + " (check the model's size options)");
  }
}

/// The search bounds of --largest-batch: far above any zoo model's answer on one GPU but a small
/// MLP's (it prints "or more" at the top); a byte count that overflows is a usage error.
constexpr batch_bounds largest_batch_bounds{1, 65536};

/// --largest-batch on one device's evaluation; the library's std::invalid_argument (a size past
/// what the model's byte counts hold) becomes a usage error naming the model.
std::int64_t largest_micro_batch(const tools::evaluation& e, const std::string& label) {
  try {
    return e.largest_micro_batch(largest_batch_bounds);
  } catch (const std::invalid_argument& ex) {
    throw usage_error(label + ": --largest-batch: " + strip_prefix(ex.what()));
  }
}

// ---------------------------------------------------------------------------------------------
// Issue D: LoRA (--lora) and serving (--serve, --context, --concurrency, --kv-dtype); llm_cli.hpp.

/// The Llama-family configuration of the model given, or a usage error naming the flag.
models::llama_config llm_config(const char* flag, const run_config& c) {
  const auto g = tools::llama_config_of(*c.entry, c.opts);
  if (!g)
    throw usage_error(std::string(flag) + " applies to the Llama family (llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b, mistral-7b, phi-3-mini, qwen2-0.5b, qwen2-7b, qwen3-0.6b, qwen3-8b, gemma-2b" +
                      (std::string(flag) == "--lora" ? ", mixtral-8x7b" : "") + ", or --hf-config of a llama, mistral, qwen2, qwen3, gemma, phi3" +
                      (std::string(flag) == "--lora" ? " or mixtral" : "") + " config.json" +
                      (std::string(flag) == "--lora" ? "; and gpt2, gpt2-medium, gpt2-large, gpt2-xl, t5-small ... t5-11b, or a gpt2, t5 or (with --task seq-cls) bert config.json; "
                                                      "torchvision's models and --graph files by module name, targets=NAME,..." : "") +
                      "), not " + c.model_arg);
  return *g;
}
/// --lora: the LoRA'd zoo entry (Llama family, or Mixtral with adapters on its attention) and
/// PEFT's counts.
std::pair<tools::zoo_entry, models::parameter_counts> lora_model(const cli::parsed_args& a, run_config& c) {
  if (a.has("inference")) throw usage_error("--lora budgets fine-tuning; it does not combine with --inference");
  if (a.has("freeze-all-but") || a.has("freeze-all")) throw usage_error("--lora freezes the base model itself; drop --freeze-all-but / --freeze-all");
  if (const auto& peft = c.entry->peft) {  // GPT-2, BERT's classifier, T5: the family's default targets
    auto l = tools::parse_lora(*a.get("lora"), peft->width(c.opts), peft->default_targets);
    tools::apply_quant(a, l);
    auto run = tools::peft_family_model(*c.entry, c.opts, l);
    return {std::move(run.entry), run.counts};
  }
  if (c.entry->lora_by_name) {  // torchvision's models, --graph: PEFT's target_modules by name
    auto run = tools::lora_by_name_model(*c.entry, c.opts, a, c.plan, c.devices.front());
    return {std::move(run.entry), run.counts};
  }
  const auto mixtral = tools::mixtral_config_of(*c.entry, c.opts);
  const auto g = mixtral ? *mixtral : llm_config("--lora", c);
  auto l = tools::parse_lora(*a.get("lora"), g.width);
  if (mixtral && a.has("quant")) throw usage_error("--quant does not combine with --lora on " + c.model_arg + " (quantized experts are not modelled)");
  tools::apply_quant(a, l);
  tools::apply_kbit_preparation(l, c.plan);
  auto run = tools::lora_model(*c.entry, g, tools::experts_of(*c.entry, c.opts), l);
  return {std::move(run.entry), run.counts};
}

/// --svg: where it cannot apply, said before anything runs.
void check_svg(const cli::parsed_args& a, const run_config& c, bool distributed) {
  if (!a.has("svg")) return;
  if (a.has("serve")) throw usage_error("--svg does not combine with --serve (it draws a training step)");
  if (c.legacy_json) throw usage_error("--svg does not combine with --json (use --format json for the table and --svg for the picture)");
  if (distributed) throw usage_error("--svg does not combine with --gpus and its layouts (it draws one device's step)");
  if (c.devices.size() > 1) throw usage_error("--svg draws one device's timeline: give --device NAME, not --devices");
  if (a.get("svg")->empty()) throw usage_error("--svg: expected a file name");
}

/// --largest-batch: where it cannot apply, said before anything runs.
void check_largest_batch(const cli::parsed_args& a, const run_config& c, bool distributed) {
  if (!a.has("largest-batch")) return;
  if (a.has("serve")) throw usage_error("--largest-batch does not combine with --serve (a serving budget gives its max sequences and tokens itself)");
  if (distributed) throw usage_error("--largest-batch does not combine with --gpus and its layouts (it searches one device's step)");
  if (c.teacher)
    throw usage_error("--largest-batch does not combine with --teacher (the teacher's forward would stay at --batch's size; the library's "
                      "max_micro_batch_distilled re-simulates it)");
}

/// --largest-batch's line for one device (md).
std::string largest_batch_line(const tools::budget_view& v) {
  const auto n = v.largest_micro_batch;
  const std::string answer = n == 0 ? "none (micro-batch 1 does not fit)"
                             : n == largest_batch_bounds.max ? std::to_string(n) + " or more (the search stops there)"
                                                             : std::to_string(n);
  return "Largest micro-batch that fits " + v.device + ": " + answer + "\n";
}

/// --serve: one serving budget per device (md tables, or JSON with --json / --format json).
int run_serve(const cli::parsed_args& a, const run_config& c) {
  const auto moe = tools::mixtral_config_of(*c.entry, c.opts);
  const auto g = moe ? *moe : llm_config("--serve", c);
  auto r = tools::parse_serve(a, g, c.precision);
  r.s.allocator = c.plan.allocator;  // --alloc-conf
  std::vector<serving_budget> out;
  for (const auto& d : c.devices) {
    try {
      if (moe && a.has("quant")) throw usage_error("--quant does not combine with --serve " + c.model_arg + " (quantized experts are not modelled)");
      out.push_back(moe ? serve(g, *tools::experts_of(*c.entry, c.opts), r.s, d) : serve(g, r.s, d));
    } catch (const std::invalid_argument& ex) {
      throw usage_error("--serve " + c.model_arg + ": " + strip_prefix(ex.what()));
    }
  }
  if (a.has("json") || c.format == "json") {
    const auto& f = out.front();
    nlohmann::ordered_json j = {{"model", c.entry->name}, {"engine", r.engine}, {"context", r.s.context}, {"new_tokens", r.s.generated}, {"concurrency", r.s.concurrency}, {"kv_dtype", r.kv_name},
                                {"quant", a.has("quant") ? *a.get("quant") : "none"},
                                {"total_params", f.parameter_count},
                                {"active_params", moe ? models::mixtral_parameter_counts(g, *tools::experts_of(*c.entry, c.opts)).active : f.parameter_count},
                                {"precision", c.precision}, {"params", f.parameter_count}, {"kv_cache_bytes_per_token", f.kv_bytes_per_token},
                                {"max_concurrent_tokens", f.max_concurrent_tokens}, {"max_context", f.max_context}, {"budgets", nlohmann::ordered_json::array()}};
    for (std::size_t i = 0; i < out.size(); ++i) j["budgets"].push_back(serving_json(out[i], c.devices[i]));
    std::cout << j.dump(2) << "\n";
  } else {
    for (std::size_t i = 0; i < out.size(); ++i)
      std::cout << (i ? "\n" : "") << "**" << c.model_arg << (r.engine == "hf" ? " generate() on " : " served on ") << c.devices[i].name << ": "
                << r.s.concurrency << " x " << r.s.context << " tokens"
                << (r.engine == "hf" ? " (" + std::to_string(r.s.context - r.s.generated) + " prompt + " + std::to_string(r.s.generated) + " new)" : "") << ", " << (a.has("quant") ? *a.get("quant") : c.precision) << " weights, " << r.kv_name << " KV**\n\n" << markdown_table(out[i]);
  }
  const bool all_fit = std::all_of(out.begin(), out.end(), [](const serving_budget& b) { return b.fits(); });
  return c.require_fit && !all_fit ? 1 : 0;
}

/// Every module path of `e` and every shorter path it starts with (`encoder.layers` of
/// `encoder.layers.encoder_layer_{0..11}`), once each: what a misspelt name may have meant.
std::vector<std::string> name_candidates(const tools::evaluation& e) {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) { if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n); };
  for (const auto& path : e.module_paths) {
    for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) add(path.substr(0, dot));
    add(path);
  }
  return out;
}

/// --freeze-all-but: every name selects a module of the model (the library's rule: a module path
/// such as layer4.2.conv3, or a prefix of one). Checked on a run without the restriction (the
/// library refuses a name that selects nothing), so that the message can list the model's
/// top-level names and suggest a close module path.
void check_freeze_prefixes(const run_config& c, training t) {
  if (c.freeze_prefixes.empty()) return;
  t.train_only = nullptr;
  const auto e = run_model(*c.entry, c.model_arg, c.opts, t, c.devices.front());
  for (const auto& p : c.freeze_prefixes) {
    if (e.names_a_module(p)) continue;
    if (const auto parts = e.part_names_below(p); !parts.empty())
      throw usage_error("--freeze-all-but: '" + p + "' names no part of " + p.substr(0, p.rfind('.')) + " (its parts: " + parts + ")");
    const auto& names = e.top_level_names.empty() ? e.module_paths : e.top_level_names;
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < 16; ++i) list += (i ? ", " : "") + names[i];
    if (names.size() > 16) list += ", ...";
    throw usage_error("--freeze-all-but: '" + p + "' matches no module of " + c.model_arg +
                      (list.empty() ? std::string(" (the model names no modules)") : " (its names include: " + list + ")") +
                      cli::did_you_mean(p, name_candidates(e)));
  }
}

/// --json: the reference step of the CPU runtime (default 1.13): for-loop step(), (out**2).mean()
/// (with --runtime torch2.6-cpu: --loss, or a graph file's own loss).
int run_reference_step(const cli::parsed_args& a, const run_config& c) {
  training t = cpu_reference_step(c.plan.batch, c.plan.optimizer, c.runtime.empty() ? runtime_kind::torch1_13_cpu : c.plan.rules());
  t.checkpoint_blocks = c.plan.checkpoint_blocks;
  t.train_only = c.plan.train_only;
  if (!c.runtime.empty() && a.has("step")) t.step = c.plan.step;
  if (!c.runtime.empty() && a.has("precision")) t.precision = c.plan.precision;
  if (!c.runtime.empty() && a.has("loss")) t.loss = c.plan.loss;  // a graph file's own loss (nanoGPT's cross-entropy)
  t.emulated_bf16 = c.plan.emulated_bf16;
  check_freeze_prefixes(c, t);
  const auto e = run_model(*c.entry, c.model_arg, c.opts, t, c.devices.front());
  auto view = tools::view_of(e.budget);
  print_reference_json(view);
  return 0;
}

/// The teacher: its weights and no-grad forward peak at the micro-batch, in the student's precision.
void configure_teacher(run_config& c) {
  tools::model_options topts;
  const auto fam = tools::families();
  for (const auto& o : fam.at(c.teacher->family))
    if (c.opts.values.count(o.name)) topts.values[o.name] = c.opts.values.at(o.name);
  // the teacher reads the student's batch and attention_mask: a Llama-family teacher its masks too
  for (const auto& flag : {tools::padded_batch_option, tools::attention_mask_option})
    if (c.opts.values.count(flag) && c.teacher->llama) topts.values[flag] = 1;
  training t{};
  t.batch = c.plan.micro();
  t.inference = true;
  t.precision = c.plan.precision;
  t.emulated_bf16 = c.plan.emulated_bf16;
  const auto tv = tools::view_of(run_model(*c.teacher, "--teacher " + c.teacher->name, topts, t, c.devices.front()).budget);
  const dtype pt = c.precision == "fp16" ? dtype::fp16 : c.precision == "bf16" ? dtype::bf16 : dtype::fp32;
  c.plan.teacher = teacher_policy{true, c.teacher_offload, tv.parameter_count, tv.forward_peak, pt};
}

int run(const cli::parsed_args& given) {
  auto zoo = tools::zoo();
  const auto a = with_graph_model(given, zoo);
  tools::require_serve_for_its_flags(a);
  if (a.has("serve")) tools::reject_with_serve(a);
  if (a.has("quant") && !a.has("lora") && !a.has("serve"))
    throw usage_error("--quant needs --lora (a quantized base to fine-tune) or --serve (quantized serving weights)");
  tools::parse_task(a);  // --task without --hf-config: said before the model is read
  run_config c = configure(a, zoo);
  if (!c.train_only.empty()) c.plan.train_only = c.train_only.c_str();
  const auto dist = tools::configure_distributed(a, {c.legacy_json, c.plan.inference, c.devices.size() > 1, c.teacher != nullptr});
  check_svg(a, c, dist.active);
  check_largest_batch(a, c, dist.active);
  if (a.has("serve")) return run_serve(a, c);
  // --lora: the zoo entry is replaced by its LoRA'd model; PEFT's counts go to the JSON outputs
  tools::zoo_entry lora_entry;
  std::optional<models::parameter_counts> peft;
  if (a.has("lora")) {
    std::tie(lora_entry, peft) = lora_model(a, c);
    c.entry = &lora_entry;
  }

  if (c.legacy_json) return run_reference_step(a, c);

  if (c.teacher) configure_teacher(c);

  std::vector<tools::budget_view> views;
  std::vector<tools::evaluation> evals;
  for (const auto& d : c.devices) {
    if (views.empty()) check_freeze_prefixes(c, c.plan);
    const auto e = run_model(*c.entry, c.model_arg, c.opts, c.plan, d);
    auto v = tools::view_of(e.budget);
    if (v.device_total < 0 || v.live_tensor_bytes_at_peak < 0 || v.activations_at_peak < 0)
      throw usage_error(c.model_arg + ": the byte counts overflow; reduce --batch or the model's sizes");
    if (a.has("largest-batch")) v.largest_micro_batch = largest_micro_batch(e, c.model_arg);
    views.push_back(v);
    evals.push_back(e);
  }

  if (a.has("svg")) write_svg(*a.get("svg"), evals.front(), c.model_arg.empty() ? c.entry->name : c.model_arg);
  if (dist.active) return tools::print_distributed(dist, c.format, c.model_arg, describe_config(c), evals.front().facts(), c.require_fit);
  if (c.format == "json") {
    print_json(c, peft, views);
  } else if (c.format == "csv") {
    print_csv(views);
  } else if (views.size() == 1) {
    // one device: the library's full table, then the per-block one with PyTorch's module names
    std::cout << markdown_table(evals.front().budget) << "\n" << evals.front().block_table();
  } else {
    std::cout << side_by_side(c, views);
  }
  if (c.format == "md") std::cout << tools::loaded_dtype_note(c.hf_torch_dtype, c.plan, a.has("lora"));
  if (c.format == "md") std::cout << tools::gemma2_attention_note(c.entry->llama) << c.entry->budget_note;
  if (c.format == "md" && a.has("largest-batch")) {
    std::cout << "\n";
    for (const auto& v : views) std::cout << largest_batch_line(v);
  }
  const bool all_fit = std::all_of(views.begin(), views.end(), [](const tools::budget_view& v) { return v.fits; });
  return c.require_fit && !all_fit ? 1 : 0;
}

/// GPUBUDGET_ALLOCATOR_EVENTS=FILE: the allocator replays' requests, frees and segments, one per
/// line (detail::allocator_event_tap), to set beside a measured trace
/// (benchmarks/gpu/compare_allocator_events.py). A debugging aid, not a feature.
std::FILE* allocator_events = nullptr;
void write_allocator_event(char what, std::int64_t bytes, std::int32_t handle) {
  std::fprintf(allocator_events, "%c %lld %d\n", what, static_cast<long long>(bytes), handle);
}
void open_allocator_events() {
  const char* path = std::getenv("GPUBUDGET_ALLOCATOR_EVENTS");
  if (path == nullptr) return;
  allocator_events = std::fopen(path, "w");
  if (allocator_events == nullptr) throw usage_error(std::string("GPUBUDGET_ALLOCATOR_EVENTS: cannot write ") + path);
  gpubudget::detail::allocator_event_tap = &write_allocator_event;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    open_allocator_events();
    const std::vector<std::string> args(argv + 1, argv + argc);
    const auto a = cli::parse(args, all_options());
    if (a.help) {
      print_help();
      return 0;
    }
    if (a.has("reference")) {
      for (const auto& n : a.order)
        if (n != "reference" && n != "check" && n != "known-misses")
          throw usage_error("--" + n + " does not combine with --reference (which takes only --check and --known-misses)");
      if (!a.positionals.empty()) throw usage_error("unexpected argument '" + a.positionals[0] + "' with --reference");
      const auto misses = a.has("known-misses") ? parse_known_misses(*a.get("known-misses")) : std::set<std::string>{};
      return check_reference(*a.get("reference"), a.has("check"), misses);
    }
    if (a.has("check")) throw usage_error("--check needs --reference FILE");
    if (a.has("known-misses")) throw usage_error("--known-misses needs --reference FILE");
    return run(a);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "gpubudget: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubudget: %s\n", strip_prefix(e.what()).c_str());
    return 2;
  }
}
