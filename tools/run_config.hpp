// The command line's configuration (tools/estimate.cpp): what a run of `gpubudget` budgets, parsed
// from the arguments by estimate.cpp's configure_* steps and read by the outputs (cli_output.hpp).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <gpubudget/training.hpp>

#include "zoo_registry.hpp"

namespace gpubudget::tools {

/// A configuration from the command line: the model, its sizes, the training policy, the devices
/// and the output format (estimate.cpp's configure_* fill it from the parsed arguments).
struct run_config {
  std::string model_arg;
  const tools::zoo_entry* entry = nullptr;
  tools::model_options opts;
  training plan{};
  std::string precision = "fp32", optimizer = "adamw", step = "foreach", loss = "mean_square";
  std::string runtime;  ///< --runtime as given ("" = the default: torch2-cuda, or torch1.13-cpu with --json)
  std::string train_only;  ///< storage for plan.train_only
  std::vector<std::string> freeze_prefixes;
  const tools::zoo_entry* teacher = nullptr;
  std::string hf_torch_dtype;  ///< --hf-config: the config's torch_dtype ("" if none)
  bool teacher_offload = false;
  std::vector<device> devices;
  bool legacy_json = false, require_fit = false;
  std::string format = "md";
};

/// --precision values and how the tables name them.
inline const std::map<std::string, std::string>& precision_names() {
  static const std::map<std::string, std::string> m = {
      {"fp32", "fp32"}, {"amp_fp16", "AMP fp16"}, {"amp_bf16", "AMP bf16"}, {"fp16", "fp16 + fp32 master"}, {"bf16", "bf16 + fp32 master"}};
  return m;
}

/// --runtime NAME as the library's runtime_kind (the default: PyTorch 2 on CUDA).
inline runtime_kind runtime_of(const std::string& name) {
  return name == "torch1.13-cpu" ? runtime_kind::torch1_13_cpu : name == "torch2.6-cpu" ? runtime_kind::torch2_6_cpu : runtime_kind::torch2_cuda;
}

/// The configuration in one line, the tables' title.
inline std::string describe_config(const run_config& c) {
  std::string s = c.model_arg + ", batch " + std::to_string(c.plan.batch);
  if (c.plan.micro() != c.plan.batch) s += " (micro " + std::to_string(c.plan.micro()) + " x " + std::to_string(c.plan.accumulation_steps()) + " accumulation)";
  s += ", " + precision_names().at(c.precision);
  s += c.plan.inference ? ", inference" : ", " + c.optimizer + " (" + c.step + ")";
  if (!c.runtime.empty()) s += ", " + c.runtime;
  if (c.plan.checkpoint_all) s += ", checkpoint all";
  if (c.plan.checkpoint_blocks) s += ", checkpoint blocks";
  if (!c.train_only.empty()) s += ", train only " + c.train_only;
  if (c.plan.freeze_all) s += ", all frozen";
  if (c.plan.ema) s += ", EMA";
  if (c.teacher) s += ", teacher " + c.teacher->name + (c.teacher_offload ? " (offloaded)" : "");
  return s;
}

}  // namespace gpubudget::tools
