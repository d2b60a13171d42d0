// The command line's options (tools/estimate.cpp): the device catalog behind --device/--devices,
// every option's spec (the general ones here; distributed_cli.hpp, llm_cli.hpp and hf_cli.hpp
// add theirs) and --help.
#pragma once
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <gpubudget/devices.hpp>

#include "cli_args.hpp"
#include "distributed_cli.hpp"
#include "hf_cli.hpp"
#include "llm_cli.hpp"
#include "zoo_registry.hpp"

namespace gpubudget::tools {

struct named_device {
  std::string key;
  device dev;
};

inline const std::vector<named_device>& device_catalog() {
  static const std::vector<named_device> table = {
      {"t4", devices::t4},
      {"v100_16gb", devices::v100_16gb},
      {"v100_32gb", devices::v100_32gb},
      {"a10", devices::a10},
      {"l4", devices::l4},
      {"a100_40gb", devices::a100_40gb},
      {"a100_80gb", devices::a100_80gb},
      {"h100_80gb", devices::h100_80gb},
      {"h100", devices::h100_80gb},
      {"h200", devices::h200},
      {"rtx3090", devices::rtx3090},
      {"rtx4090", devices::rtx4090},
      {"16gb", devices::generic_16gb},
  };
  return table;
}

inline std::vector<std::string> device_keys() {
  std::vector<std::string> k;
  for (const auto& d : device_catalog()) k.push_back(d.key);
  return k;
}

inline device parse_device(const std::string& flag, const std::string& s) {
  for (const auto& d : device_catalog())
    if (d.key == s) return d.dev;
  std::string list;
  for (const auto& k : device_keys()) list += (list.empty() ? "" : " ") + k;
  throw cli::usage_error(flag + ": unknown device '" + s + "' (known: " + list + ")" + cli::did_you_mean(s, device_keys()));
}

/// The general options (model sizes come from the families' tables).
inline std::vector<cli::option_spec> general_options() {
  return {
      {"batch", true, "N", "samples per optimizer step (effective batch), 1 to 1048576 (default 1)"},
      {"micro-batch", true, "N", "samples per forward/backward; must divide --batch (default: --batch, no accumulation)"},
      {"precision", true, "P", "fp32 | amp_fp16 | amp_bf16 | fp16 | bf16 (fp16/bf16: 16-bit weights + fp32 master copy); default fp32"},
      {"optimizer", true, "O", "sgd | sgd_momentum | adam | adamw | adam8bit | adamw8bit (bitsandbytes' 8-bit state; default adamw)"},
      {"step", true, "S", "optimizer.step() implementation: for_loop | foreach | fused (default foreach, PyTorch's CUDA default)"},
      {"loss", true, "L", "mean_square | cross_entropy (F.cross_entropy on the output) | causal_lm (transformers' ForCausalLMLoss: logits.float() first) (default mean_square)"},
      {"drop-output", false, "", "the loss is computed where the output is made and the output dropped before backward (model(ids, labels=ids).loss, F.cross_entropy(model(x), y)); default: the loop holds it"},
      {"ema", false, "", "keep an fp32 EMA copy of the parameters"},
      {"no-master-weights", false, "", "with --precision fp16|bf16: the model itself is 16-bit (model.to(torch.bfloat16)) and the optimizer updates it directly: no fp32 master copy, optimizer state in 16 bit"},
      {"inference", false, "", "forward only, under no_grad (no optimizer, gradients or saved activations)"},
      {"checkpoint-all", false, "", "gradient-checkpoint every top-level block"},
      {"checkpoint-blocks", false, "", "gradient-checkpoint every repetition inside repeated blocks (e.g. transformer layers)"},
      {"freeze-all-but", true, "NAMES", "train only the modules these comma-separated PyTorch module paths (or prefixes of them) select, e.g. layer4.2.conv3"},
      {"freeze-all", false, "", "freeze every parameter"},
      {"hf-config", true, "FILE", "the model from a transformers config.json (llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, olmo2, olmo3, granite, phi3, mixtral, gpt2, bert, t5) instead of a zoo name; --seq etc. apply"},
      {"graph", true, "FILE", "the model from a JSON graph that tools/gpubudget-export wrote (any nn.Module; docs/export.md) instead of a zoo name"},
      {"teacher", true, "MODEL", "a distillation teacher (any zoo model, or a transformers config.json), run without grad before each micro-batch"},
      {"teacher-offload", false, "", "the teacher's weights live in host memory and are brought in for its forward"},
      {"fragmentation", true, "PCT", "a flat allocator fragmentation reserve in percent of the peak, 0 to 100, in place of the caching allocator model"},
      {"steps", true, "N", "with the caching allocator model: the training steps the job runs, 1 to 1000, replayed until one makes and frees no segment (near a device's capacity a later step can run out of memory; default: a long job, at most 1000, as the C++ API's training::steps = 0)"},
      {"alloc-conf", true, "CONF", "PyTorch's caching allocator settings in PYTORCH_CUDA_ALLOC_CONF syntax (expandable_segments:True, max_split_size_mb:N, roundup_power2_divisions:N or [MB:N,...,>:N])"},
      {"device", true, "NAME", "the GPU (default v100_16gb); see the list below"},
      {"devices", true, "A,B,...", "several GPUs: one column each (device total, headroom, fits)"},
      {"memory-gib", true, "X", "device capacity in GiB: a custom device, or --device NAME with this capacity"},
      {"context-mib", true, "N", "CUDA context size in MiB, 0 to 65536 (default 476.84 MiB = 500 MB, seed 002)"},
      {"allow-emulated-bf16", false, "", "budget bf16 precisions on GPUs without bf16 support (compute capability < 8.0)"},
      {"format", true, "F", "md | csv | json (default md)"},
      {"json", false, "", "the reference-case fields of a CPU training step (accuracy checks; see below; --runtime picks 1.13 or 2.6)"},
      {"require-fit", false, "", "exit with status 1 when the budget does not fit (every --devices entry must fit)"},
      {"largest-batch", false, "", "also find the largest micro-batch that fits each device, 1 to 65536 (max_micro_batch: the step as configured otherwise; with --micro-batch below --batch the effective batch is kept and accumulation absorbs the rest)"},
      {"svg", true, "FILE", "also write the step's memory timeline to FILE as an SVG picture (one --device; see below)"},
      {"runtime", true, "R", "torch1.13-cpu | torch2.6-cpu | torch2-cuda: the framework/back end whose rules apply (default torch2-cuda; --json: torch1.13-cpu)"},
      {"reference", true, "FILE", "hold every reference case of FILE against its estimate (a table; the file says its PyTorch version)"},
      {"check", false, "", "with --reference: exit 1 when a field leaves its tolerance"},
      {"known-misses", true, "CASE:FIELD,...", "with --reference: fields excluded from --check (each must still miss)"},
  };
}

inline std::vector<cli::option_spec> all_options() {
  auto specs = general_options();
  for (const auto& o : tools::distributed_options()) specs.push_back(o);  // --gpus, --zero, ... (distributed_cli.hpp)
  for (auto& o : tools::llm_options()) specs.push_back(o);  // issue D: LoRA and serving (llm_cli.hpp)
  for (auto& o : tools::hf_options()) specs.push_back(o);   // issue G: --task (hf_cli.hpp)
  std::set<std::string> seen;
  for (const auto& [family, opts] : tools::families())
    for (const auto& o : opts)
      if (seen.insert(o.name).second) specs.push_back({o.name, true, "N", "model size (see the models' list)"});
  return specs;
}

inline void print_help() {
  std::string out =
      "usage: gpubudget MODEL [options]                budget a zoo model (or a reference case by name)\n"
      "       gpubudget --reference FILE [--check]     hold the estimates against measured PyTorch steps\n"
      "       gpubudget --help                         this text (also anywhere on the line)\n\n"
      "Options (each at most once; --name VALUE or --name=VALUE):\n";
  auto listed = general_options();
  for (auto& o : tools::llm_options()) listed.push_back(o);
  for (auto& o : tools::hf_options()) listed.push_back(o);
  for (const auto& o : listed) {
    std::string head = "  --" + o.name + (o.takes_value ? " " + o.value_name : "");
    if (head.size() < 28) head.resize(28, ' ');
    else head += "\n" + std::string(28, ' ');
    out += head + o.help + "\n";
  }
  out += "\nParallel layouts (one rank of --gpus N; a per-rank table and the layouts ranked by cost):\n";
  for (const auto& o : tools::distributed_options()) {
    std::string head = "  --" + o.name + (o.takes_value ? " " + o.value_name : "");
    if (head.size() < 28) head.resize(28, ' ');
    out += head + o.help + "\n";
  }
  out +=
      "\nOutput: --format md (default) prints the budget table (several devices: one column each);\n"
      "--format csv prints component,<device>... rows in bytes; --format json prints every component of\n"
      "every device's budget with the configuration. --json (kept for the accuracy checks) prints\n"
      "only the reference-case fields of an fp32 training step as measured on the CPU (for-loop\n"
      "optimizer, (out**2).mean() loss) under PyTorch 1.13, or under --runtime torch2.6-cpu; it takes\n"
      "--batch, --optimizer, --checkpoint-blocks, --freeze-all-but, --runtime and the model's sizes only\n"
      "(with --runtime torch2.6-cpu also --step and --precision fp32|amp_bf16).\n"
      "\nTimeline: --svg FILE draws live tensor bytes over one step (forward, backward, optimizer.step()),\n"
      "stacked as parameters, optimizer state, gradients, saved activations and the rest, with the peak\n"
      "and the record that causes it, and the device's capacity as a red line (no script: any browser).\n"
      "It takes one device and the budget table's options; the table is printed as without it.\n"
      "\nTeacher: --teacher MODEL (a zoo name, or a transformers config.json) budgets that model's no-grad\n"
      "forward (at the micro-batch, in the student's precision) and its weights; it reads the student's\n"
      "size options its family takes (a config.json teacher: the head its \"architectures\" names).\n"
      "\nExit status: 0 ok (with --require-fit: fits), 1 does not fit (only with --require-fit),\n"
      "2 bad input (one line on stderr starting with \"gpubudget: \"; nothing on stdout).\n"
      "\nDevices: ";
  for (const auto& d : device_catalog()) out += d.key + " ";
  out += "\n\nModels (and the size options of their family, with defaults):\n";
  const auto fam = tools::families();
  for (const auto& e : tools::zoo()) {
    std::string line = "  " + e.name;
    if (line.size() < 22) line.resize(22, ' ');
    for (const auto& o : fam.at(e.family)) line += " --" + o.name + " N (" + o.fallback + ")";
    out += line + "\n";
  }
  out += "\nReference cases (a model, its sizes, batch and optimizer, as in benchmarks/accuracy/reference):\n ";
  for (const auto& rc : tools::reference_cases()) out += " " + rc.name;
  out +=
      "\n\nExamples:\n"
      "  gpubudget resnet50 --batch 256 --micro-batch 64 --precision amp_fp16 --devices t4,v100_16gb,a100_80gb\n"
      "  gpubudget llama-2-7b --seq 2048 --precision bf16 --optimizer adamw --step fused --device a100_80gb --require-fit\n"
      "  gpubudget vit_b_16 --batch 64 --freeze-all-but heads --format json\n"
      "  gpubudget gpt2-medium --batch 8 --seq 512 --precision amp_fp16 --device t4 --svg step.svg\n";
  std::fputs(out.c_str(), stdout);
}

}  // namespace gpubudget::tools
