// tools/distributed_cli.hpp — the command line's parallel-layout flags (--gpus, --zero, --fsdp,
// --fsdp-version, --offload, --zero-whole-gradients, --shard-group, --tp, --pp, --vpp, --sp, --cp, --ep) and the per-rank
// output. Kept apart from estimate.cpp, which calls configure_distributed() and print_distributed() only.
#pragma once
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gpubudget/distributed.hpp>
#include <gpubudget/report.hpp>
#include <nlohmann/json.hpp>

#include "cli_args.hpp"

namespace gpubudget::tools {

inline std::vector<cli::option_spec> distributed_options() {
  return {
      {"gpus", true, "N", "world size: budget one rank of N GPUs of --device (1 to 65536); --batch is per GPU"},
      {"zero", true, "S", "DeepSpeed ZeRO stage 0 | 1 | 2 | 3 (16-bit engines: --precision fp16 or bf16)"},
      {"fsdp", true, "S", "PyTorch FSDP sharding: full_shard | shard_grad_op | hybrid_shard | no_shard"},
      {"offload", true, "W", "CPU offload: optimizer | parameters | optimizer,parameters (needs --zero or --fsdp)"},
      {"zero-whole-gradients", false, "", "with --zero 2: count whole 16-bit gradients, as DeepSpeed's estimator did before its PR #5099 (its docs' figures)"},
      {"shard-group", true, "N", "with --fsdp hybrid_shard: GPUs per shard group (default 8, one node)"},
      {"fsdp-version", true, "V", "with --fsdp: 1 (FullyShardedDataParallel, flat parameters; default) or 2 (fully_shard, per-parameter shards)"},
      {"tp", true, "N", "tensor parallel size (must divide the heads and FFN width), 1 to 1024"},
      {"pp", true, "N", "pipeline parallel size (1F1B: stage s holds pp - s micro-batches in flight; every stage is listed), 1 to 1024"},
      {"vpp", true, "N", "with --pp: interleaved 1F1B with N model chunks per stage (Megatron's --virtual-pipeline-model-parallel-size)"},
      {"sp", false, "", "sequence parallelism (with --tp): activations split by tp (Korthikanti et al. 2022)"},
      {"cp", true, "N", "context parallel size: the sequence split over N GPUs, 1 to 1024"},
      {"ep", true, "N", "expert parallel size: an MoE model's routed experts sharded over N data-parallel ranks (must divide the experts and the data-parallel size)"},
  };
}

/// A parallel layout from the command line.
struct distributed_request {
  bool active = false;
  parallel_layout layout{};
  bool model_parallel_given = false;  ///< --tp, --pp, --sp, --cp, --ep or --vpp: the ranking keeps them
};

/// What the rest of the command line says, for the checks that combine flags.
struct distributed_context {
  bool legacy_json = false, inference = false, several_devices = false, teacher = false;
};

inline std::string first_distributed_flag(const cli::parsed_args& a) {
  for (const auto& n : a.order)
    for (const auto& o : distributed_options())
      if (o.name == n) return "--" + n;
  return "";
}

inline offload_policy parse_offload(const std::string& text) {
  offload_policy o{};
  for (const auto& item : cli::split_list("--offload", text)) {
    const auto v = cli::parse_choice("--offload", item, {"optimizer", "parameters"});
    (v == "optimizer" ? o.optimizer : o.parameters) = true;
  }
  return o;
}

/// The engine flags: --zero, --fsdp, --fsdp-version, --offload, --shard-group.
inline void configure_engine(const cli::parsed_args& a, parallel_layout& l) {
  if (a.has("zero") && a.has("fsdp")) throw cli::usage_error("--zero and --fsdp contradict each other (DeepSpeed ZeRO or PyTorch FSDP: give one)");
  if (a.has("zero")) {
    l.engine = sharding::zero;
    l.zero_stage = std::stoll(cli::parse_choice("--zero", *a.get("zero"), {"0", "1", "2", "3"}));
  }
  if (a.has("fsdp")) {
    l.engine = sharding::fsdp;
    const auto s = cli::parse_choice("--fsdp", *a.get("fsdp"), {"full_shard", "shard_grad_op", "hybrid_shard", "no_shard"});
    l.fsdp = s == "full_shard" ? fsdp_strategy::full_shard : s == "shard_grad_op" ? fsdp_strategy::shard_grad_op
             : s == "hybrid_shard"                         ? fsdp_strategy::hybrid_shard : fsdp_strategy::no_shard;
  }
  if (a.has("zero-whole-gradients")) {
    if (!(l.engine == sharding::zero && l.zero_stage == 2)) throw cli::usage_error("--zero-whole-gradients needs --zero 2 (ZeRO-1 keeps whole gradients anyway)");
    l.deepspeed.estimator_accounting = true;
  }
  if (a.has("shard-group")) {
    if (!(l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard)) throw cli::usage_error("--shard-group needs --fsdp hybrid_shard");
    l.shard_group = cli::parse_integer("--shard-group", *a.get("shard-group"), 1, 65536);
  }
  if (a.has("fsdp-version")) {
    if (l.engine != sharding::fsdp) throw cli::usage_error("--fsdp-version needs --fsdp");
    l.fsdp_version = std::stoll(cli::parse_choice("--fsdp-version", *a.get("fsdp-version"), {"1", "2"}));
    if (l.fsdp_version == 2 && l.fsdp == fsdp_strategy::no_shard)
      throw cli::usage_error("--fsdp no_shard with --fsdp-version 2: fully_shard has no NO_SHARD (use plain data parallelism: drop --fsdp)");
  }
  if (!a.has("offload")) return;
  l.offload = parse_offload(*a.get("offload"));
  if (l.engine == sharding::none) throw cli::usage_error("--offload needs --zero or --fsdp (plain data parallelism keeps every state on the GPU)");
  if (l.engine == sharding::zero && l.zero_stage == 0) throw cli::usage_error("--offload needs --zero 1, 2 or 3 (stage 0 shards and offloads nothing)");
  if (l.engine == sharding::zero && l.offload.parameters && l.zero_stage != 3)
    throw cli::usage_error("--offload parameters needs --zero 3 (DeepSpeed offloads parameters at stage 3 only)");
  if (l.engine == sharding::fsdp && !l.offload.parameters)
    throw cli::usage_error("--offload optimizer with --fsdp: FSDP's CPUOffload moves parameters, gradients and the optimizer step together; use --offload parameters");
}

/// The model-parallel flags: --tp, --pp, --sp, --cp, --ep, checked against --gpus.
inline void configure_model_parallel(const cli::parsed_args& a, parallel_layout& l) {
  auto size = [&](const char* n) { return a.has(n) ? cli::parse_integer(std::string("--") + n, *a.get(n), 1, 1024) : 1; };
  l.tensor_parallel = size("tp"), l.pipeline_parallel = size("pp"), l.context_parallel = size("cp"), l.expert_parallel = size("ep");
  l.sequence_parallel = a.has("sp");
  if (a.has("vpp")) {
    l.virtual_pipeline = cli::parse_integer("--vpp", *a.get("vpp"), 1, 1024);
    if (l.pipeline_parallel == 1) throw cli::usage_error("--vpp needs --pp N with N > 1 (model chunks per pipeline stage)");
  }
  if (l.sequence_parallel && l.tensor_parallel == 1) throw cli::usage_error("--sp needs --tp N with N > 1 (sequence parallelism splits along the tensor-parallel group)");
  if (l.world_size % l.model_parallel() != 0)
    throw cli::usage_error("--gpus " + std::to_string(l.world_size) + " is not divisible by --tp " + std::to_string(l.tensor_parallel) + " x --pp " +
                           std::to_string(l.pipeline_parallel) + " x --cp " + std::to_string(l.context_parallel));
  if (l.data_parallel() % l.expert_parallel != 0)
    throw cli::usage_error("--ep " + std::to_string(l.expert_parallel) + " does not divide the data-parallel size " + std::to_string(l.data_parallel()) +
                           " (--gpus / (tp x pp x cp))");
  if (l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard && l.data_parallel() % l.shard_degree() != 0)
    throw cli::usage_error("--fsdp hybrid_shard: the shard group of " + std::to_string(l.shard_degree()) + " GPUs does not divide the data-parallel size " +
                           std::to_string(l.data_parallel()) + " (set --shard-group)");
}

/// The parallel layout the command line asks for (inactive when no layout flag is given).
inline distributed_request configure_distributed(const cli::parsed_args& a, const distributed_context& c) {
  distributed_request r{};
  const auto first = first_distributed_flag(a);
  if (first.empty()) return r;
  r.active = true;
  if (!a.has("gpus")) throw cli::usage_error(first + " needs --gpus N (the world size)");
  if (c.legacy_json) throw cli::usage_error(first + " does not combine with --json (the CPU reference fields); use --format json for per-rank fields");
  if (c.inference) throw cli::usage_error(first + " budgets a training step; it does not combine with --inference");
  if (c.several_devices) throw cli::usage_error(first + " budgets one kind of GPU: give --device, not --devices");
  if (c.teacher) throw cli::usage_error(first + " does not combine with --teacher");
  r.layout.world_size = cli::parse_integer("--gpus", *a.get("gpus"), 1, 65536);
  configure_engine(a, r.layout);
  configure_model_parallel(a, r.layout);
  for (const char* n : {"tp", "pp", "sp", "cp", "ep", "vpp"}) r.model_parallel_given = r.model_parallel_given || a.has(n);
  return r;
}

/// "ZeRO-3 + offload optimizer · TP 2 · SP".
inline std::string layout_name(const parallel_layout& l) {
  static const char* fsdp_names[] = {"FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "NO_SHARD"};
  std::string s = l.engine == sharding::zero ? "ZeRO-" + std::to_string(l.zero_stage)
                  : l.engine == sharding::fsdp     ? std::string(l.fsdp_version == 2 ? "FSDP2 " : "FSDP ") + fsdp_names[static_cast<int>(l.fsdp)]
                  : l.engine == sharding::megatron ? std::string(l.distributed_optimizer ? "Megatron (distributed optimizer)" : "Megatron")
                                               : std::string(l.world_size > 1 ? "DDP" : "one GPU");
  if (l.engine == sharding::fsdp && l.fsdp == fsdp_strategy::hybrid_shard) s += " (groups of " + std::to_string(l.shard_degree()) + ")";
  if (l.offload.optimizer && l.offload.parameters) s += " + offload optimizer,parameters";
  else if (l.offload.optimizer) s += " + offload optimizer";
  else if (l.offload.parameters) s += " + offload parameters";
  if (l.tensor_parallel > 1) s += " · TP " + std::to_string(l.tensor_parallel);
  if (l.sequence_parallel) s += " · SP";
  if (l.pipeline_parallel > 1) s += " · PP " + std::to_string(l.pipeline_parallel);
  if (l.virtual_pipeline > 1) s += " (interleaved, " + std::to_string(l.virtual_pipeline) + " chunks)";
  if (l.context_parallel > 1) s += " · CP " + std::to_string(l.context_parallel);
  if (l.expert_parallel > 1) s += " · EP " + std::to_string(l.expert_parallel);
  return s;
}

/// The library's layout errors (tp vs heads, pp vs layers) as command-line errors.
inline rank_budget rank_of(const step_facts& f, const parallel_layout& l, const std::string& model) {
  if (f.split.tp_divides > 0 && f.split.tp_divides % l.tensor_parallel != 0)
    throw cli::usage_error("--tp " + std::to_string(l.tensor_parallel) + " does not divide " + model +
                           "'s attention heads and FFN width (their greatest common divisor is " + std::to_string(f.split.tp_divides) + ")");
  if (f.split.layers > 0 && l.pipeline_parallel > f.split.layers)
    throw cli::usage_error("--pp " + std::to_string(l.pipeline_parallel) + " is larger than " + model + "'s " + std::to_string(f.split.layers) + " layers");
  if (f.split.layers > 0 && l.pipeline_parallel * l.virtual_pipeline > f.split.layers)
    throw cli::usage_error("--pp " + std::to_string(l.pipeline_parallel) + " x --vpp " + std::to_string(l.virtual_pipeline) + " model chunks exceed " + model + "'s " +
                           std::to_string(f.split.layers) + " layers");
  if (l.expert_parallel > 1 && f.experts.experts == 0)
    throw cli::usage_error("--ep " + std::to_string(l.expert_parallel) + ": " + model + " has no mixture-of-experts layers to shard");
  if (l.expert_parallel > 1 && f.experts.experts % l.expert_parallel != 0)
    throw cli::usage_error("--ep " + std::to_string(l.expert_parallel) + " does not divide " + model + "'s " + std::to_string(f.experts.experts) + " experts");
  try {
    return per_rank(f, l);
  } catch (const std::invalid_argument& e) {
    throw cli::usage_error(std::string(e.what()).substr(std::string("gpubudget: ").size()));
  }
}

inline nlohmann::ordered_json rank_json(const rank_budget& r) {
  nlohmann::ordered_json comps;
  for (const auto& c : rank_components(r)) comps[std::string(c.key)] = c.bytes;
  return {{"layout", layout_name(r.layout)},
          {"world_size", r.layout.world_size},
          {"pipeline_stage", r.pipeline_stage},
          {"data_parallel", r.layout.data_parallel()},
          {"sharded_over", r.layout.shard_degree()},
          {"per_rank_bytes", r.total()},
          {"model_states_per_rank_bytes", r.model_states()},
          {"host_model_states_per_rank_bytes", r.host_model_states},
          {"components", comps},
          {"capacity", r.capacity},
          {"headroom", r.headroom()},
          {"fits", fits_per_rank(r)}};
}

inline std::string rank_table(const std::string& title, const rank_budget& r) {
  std::string out = "**" + title + "**\n\n| Per rank | Bytes |\n|---|---:|\n";
  for (const auto& c : rank_components(r))
    if (c.always_shown || c.bytes != 0) out += "| " + std::string(c.label) + " | " + format_bytes(c.bytes) + " |\n";
  out += "| **Device total (per rank)** | **" + format_bytes(r.total()) + "** |\n";
  out += "| Model states (parameters + gradients + optimizer, DeepSpeed's terms) | " + format_bytes(r.model_states()) + " |\n";
  if (r.host_model_states) out += "| Offloaded to host memory (per rank) | " + format_bytes(r.host_model_states) + " |\n";
  out += "| Capacity | " + format_bytes(r.capacity) + " |\n| Headroom | " + format_bytes(r.headroom()) + " |\n";
  out += std::string("| Fits | ") + (fits_per_rank(r) ? "yes" : "**no**") + " |\n";
  return out;
}

/// What a pipeline stage holds beyond its share of the blocks (a tied head: its copy of the embedding).
inline std::string stage_role(std::int64_t s, std::int64_t stages, bool tied_head) {
  if (stages == 1) return "everything";
  if (s == stages - 1) return tied_head ? "blocks + head (a copy of the tied embedding), loss" : "blocks + head, loss";
  return s == 0 ? "blocks + embedding" : "blocks";
}

/// One row per pipeline stage (every tensor / data / expert rank of a stage holds the same).
inline std::string stage_table(const step_facts& f, const parallel_layout& l) {
  std::string out = "\nPipeline stages (" + std::to_string(l.pipeline_parallel) + (l.virtual_pipeline > 1 ? ", interleaved" : ", 1F1B") +
                    "), one rank each:\n\n| Stage | Holds | Micro-batches in flight | Model states | Activations + temporaries | Per rank | Fits |\n|---:|---|---:|---:|---:|---:|---|\n";
  for (std::int64_t s = 0; s < l.pipeline_parallel; ++s) {
    const auto r = per_rank_at_stage(f, l, s);
    const auto chunks = gpubudget::detail::chunks_in_flight(l, s);
    const auto in_flight = l.virtual_pipeline > 1 ? std::to_string(chunks) + " chunks" : std::to_string(chunks);
    out += "| " + std::to_string(s) + " | " + stage_role(s, l.pipeline_parallel, f.stages.tied_params > 0) + " | " + in_flight + " | " + format_bytes(r.model_states()) + " | " +
           format_bytes(r.step_peak) + " | " + format_bytes(r.total()) + " | " + (fits_per_rank(r) ? "yes" : "**no**") + " |\n";
  }
  return out;
}

inline nlohmann::ordered_json stages_json(const step_facts& f, const parallel_layout& l) {
  auto out = nlohmann::ordered_json::array();
  for (std::int64_t s = 0; s < l.pipeline_parallel; ++s) {
    const auto r = per_rank_at_stage(f, l, s);
    out.push_back({{"stage", s}, {"in_flight", gpubudget::detail::chunks_in_flight(l, s)}, {"per_rank_bytes", r.total()},
                   {"model_states_per_rank_bytes", r.model_states()}, {"activations_bytes", r.step_peak}, {"fits", fits_per_rank(r)}});
  }
  return out;
}

/// The planner's ranking on the world size: over TP x PP x engines x offload when the command line
/// fixes no model-parallel size (`search`), else over engines x offload with its sizes.
inline std::string ranking_table(const step_facts& f, const parallel_layout& base, bool search) {
  const auto world = base.world_size;
  std::string out = "\n" + std::string(search ? "Layouts" : "Data-parallel layouts") + " on " + std::to_string(world) + " GPUs" +
                    (search ? " (TP up to 8 in a node x PP x data parallel)" : " (model parallel as given)") +
                    ", fitting first, cheapest first (cost: bytes one rank sends per step + 10 x host<->GPU bytes" +
                    (search ? " + the pipeline bubble at 520 FLOPs per byte" : "") +
                    "):\n\n| Layout | Per rank | Model states | Fits | Cost per step |\n|---|---:|---:|---|---:|\n";
  const auto ranked = search ? rank_layouts(f, world) : rank_layouts(f, world, base);
  for (const auto& c : ranked) {
    if (!c.valid) continue;
    out += "| " + layout_name(c.layout) + " | " + format_bytes(c.budget.total()) + " | " + format_bytes(c.budget.model_states()) + " | " +
           (c.fits ? "yes" : "no") + " | " + format_bytes(c.cost) + " |\n";
  }
  return out;
}

/// Prints one rank's budget (md, csv or json) and returns the exit status.
inline int print_distributed(const distributed_request& d, const std::string& format, const std::string& model, const std::string& config,
                             const step_facts& f, bool require_fit) {
  const auto r = rank_of(f, d.layout, model);
  std::string title = config + ", " + std::to_string(d.layout.world_size) + " x " + std::string(r.device_name) + ", " + layout_name(d.layout) + ": per rank";
  if (d.layout.pipeline_parallel > 1) title += " (worst: pipeline stage " + std::to_string(r.pipeline_stage) + ")";
  if (format == "json") {
    nlohmann::ordered_json j = {{"model", model}, {"configuration", config}, {"single_gpu_total", f.single.total()}};
    j["distributed"] = rank_json(r);
    if (d.layout.pipeline_parallel > 1) j["distributed"]["stages"] = stages_json(f, d.layout);
    std::cout << j.dump(2) << "\n";
  } else if (format == "csv") {
    std::string out = "component,bytes\n";
    for (const auto& c : rank_components(r)) out += std::string(c.key) + "," + std::to_string(c.bytes) + "\n";
    out += "per_rank_bytes," + std::to_string(r.total()) + "\nmodel_states_per_rank_bytes," + std::to_string(r.model_states()) + "\n";
    out += "capacity," + std::to_string(r.capacity) + "\nfits," + (fits_per_rank(r) ? "yes" : "no") + "\n";
    std::cout << out;
  } else {
    std::cout << rank_table(title, r);
    if (d.layout.pipeline_parallel > 1) std::cout << stage_table(f, d.layout);
    std::cout << ranking_table(f, d.layout, !d.model_parallel_given);
  }
  return require_fit && !fits_per_rank(r) ? 1 : 0;
}

}  // namespace gpubudget::tools
