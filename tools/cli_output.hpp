// The command line's outputs (tools/estimate.cpp): the Markdown table, --format json and csv, the
// serving budget's JSON and the --svg picture, apart from the arguments (cli_args.hpp), the model
// sources (zoo_registry.hpp, hf_cli.hpp, graph_source.hpp) and the configuration (run_config.hpp).
#pragma once
#include <cstdint>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gpubudget/serving.hpp>
#include <gpubudget/svg.hpp>
#include <nlohmann/json.hpp>

#include "budget_view.hpp"
#include "cli_args.hpp"
#include "llm_cli.hpp"
#include "run_config.hpp"
#include "zoo_registry.hpp"

namespace gpubudget::tools {

/// One device's budget as --format json writes it.
inline nlohmann::ordered_json budget_json(const tools::budget_view& v) {
  nlohmann::ordered_json j = {{"device", v.device},
                              {"capacity", v.capacity},
                              {"parameter_count", v.parameter_count},
                              {"trainable_count", v.trainable_count},
                              {"resident",
                               {{"parameters", v.parameters},
                                {"buffers", v.buffers},
                                {"master_weights", v.master_weights},
                                {"optimizer_state", v.optimizer_state},
                                {"ema", v.ema},
                                {"teacher", v.teacher},
                                {"input_batch", v.input_batch}}},
                              {"step",
                               {{"gradients", v.gradients},
                                {"gradients_at_peak", v.gradients_at_peak},
                                {"activations_at_peak", v.activations_at_peak},
                                {"saved_for_backward", v.saved_for_backward},
                                {"after_forward", v.after_forward},
                                {"forward_peak", v.forward_peak},
                                {"forward_backward_peak", v.forward_backward_peak},
                                {"step_peak", v.step_peak},
                                {"optimizer_temporaries", v.optimizer_temporaries}}},
                              {"device_side",
                               {{"cuda_context", v.cuda_context},
                                {"cublas_workspace", v.cublas_workspace},
                                {"cudnn_workspace", v.cudnn_workspace},
                                {"allocator_rounding", v.allocator_rounding},
                                {"fragmentation", v.fragmentation}}},
                              {"live_tensor_bytes_at_peak", v.live_tensor_bytes_at_peak},
                              {"device_total", v.device_total},
                              {"headroom", v.headroom},
                              {"fits", v.fits}};
  if (v.largest_micro_batch >= 0) j["largest_micro_batch"] = v.largest_micro_batch;  // --largest-batch
  return j;
}

/// One device's column of --format csv.
inline std::vector<std::pair<std::string, std::int64_t>> csv_rows(const tools::budget_view& v) {
  return {{"parameters", v.parameters},
          {"buffers", v.buffers},
          {"master_weights", v.master_weights},
          {"optimizer_state", v.optimizer_state},
          {"ema", v.ema},
          {"teacher", v.teacher},
          {"input_batch", v.input_batch},
          {"gradients_at_peak", v.gradients_at_peak},
          {"activations_at_peak", v.activations_at_peak},
          {"cuda_context", v.cuda_context},
          {"workspace", v.cublas_workspace + v.cudnn_workspace},
          {"allocator_rounding", v.allocator_rounding},
          {"fragmentation", v.fragmentation},
          {"live_tensor_bytes_at_peak", v.live_tensor_bytes_at_peak},
          {"device_total", v.device_total},
          {"capacity", v.capacity},
          {"headroom", v.headroom}};
}

/// The Markdown table: one column per device.
inline std::string side_by_side(const run_config& c, const std::vector<tools::budget_view>& views) {
  std::string out = "**" + describe_config(c) + "**\n\n|  |";
  for (const auto& v : views) out += " " + v.device + " |";
  out += "\n|---|";
  for (std::size_t i = 0; i < views.size(); ++i) out += "---:|";
  out += "\n";
  auto row = [&](const std::string& name, auto get) {
    out += "| " + name + " |";
    for (const auto& v : views) out += " " + get(v) + " |";
    out += "\n";
  };
  using V = tools::budget_view;
  row("Live tensor bytes at peak", [](const V& v) { return format_bytes(v.live_tensor_bytes_at_peak); });
  row("CUDA context", [](const V& v) { return format_bytes(v.cuda_context); });
  row("cuBLAS + cuDNN workspace", [](const V& v) { return format_bytes(v.cublas_workspace + v.cudnn_workspace); });
  row("Rounding + fragmentation reserve", [](const V& v) { return format_bytes(v.allocator_rounding + v.fragmentation); });
  row("**Device total**", [](const V& v) { return "**" + format_bytes(v.device_total) + "**"; });
  row("Capacity", [](const V& v) { return format_bytes(v.capacity); });
  row("Headroom", [](const V& v) { return format_bytes(v.headroom); });
  row("Fits", [](const V& v) { return std::string(v.fits ? "yes" : "**no**"); });
  return out;
}

/// One device's serving budget as --serve --format json writes it.
inline nlohmann::ordered_json serving_json(const serving_budget& b, const device& d) {
  return {{"device", d.name}, {"capacity", b.capacity}, {"usable", b.usable}, {"weights", b.weights}, {"workspace", b.workspace},
          {"cuda_context", b.cuda_context}, {"cublas_workspace", b.cublas_workspace}, {"kv_cache_bytes", b.kv_cache_bytes},
          {"reserved_peak", b.reserved_peak}, {"allocator_reserve", b.allocator_reserve}, {"allocator_capped", b.allocator_capped}, {"device_total", b.total()}, {"max_concurrent_tokens", b.max_concurrent_tokens}, {"max_sequences", b.max_sequences},
          {"max_context", b.max_context}, {"fits", b.fits()}};
}

/// --svg FILE: the timeline of `e`'s step, written before the table is printed (a path that
/// cannot be written is bad input: exit status 2 and nothing on stdout).
inline void write_svg(const std::string& path, const tools::evaluation& e, const std::string& title) {
  const std::string picture = timeline_svg(e.timeline(), title);
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << picture) || !out.flush()) throw cli::usage_error("--svg: cannot write " + path);
}

/// --format json: the configuration, PEFT's or the mixture's counts, and one budget per device.
inline void print_json(const run_config& c, const std::optional<models::parameter_counts>& peft, const std::vector<tools::budget_view>& views) {
  nlohmann::ordered_json cfg = {{"batch", c.plan.batch},
                                {"micro_batch", c.plan.micro()},
                                {"accumulation_steps", c.plan.accumulation_steps()},
                                {"precision", c.precision},
                                {"optimizer", c.plan.inference ? "none" : c.optimizer},
                                {"step", c.step},
                                {"loss", c.loss},
                                {"output_held", c.plan.output_held},
                                {"ema", c.plan.ema},
                                {"inference", c.plan.inference},
                                {"checkpoint_all", c.plan.checkpoint_all},
                                {"checkpoint_blocks", c.plan.checkpoint_blocks},
                                {"freeze_all_but", c.freeze_prefixes},
                                {"freeze_all", c.plan.freeze_all},
                                {"fragmentation_percent", c.plan.fragmentation_percent},
                                {"runtime", c.runtime.empty() ? "torch2-cuda" : c.runtime},
                                {"teacher", c.teacher ? nlohmann::ordered_json{{"model", c.teacher->name}, {"offloaded", c.teacher_offload}} : nlohmann::ordered_json()}};
  nlohmann::ordered_json j = {{"model", c.entry->name}, {"model_options", c.opts.values}, {"training", cfg}, {"budgets", nlohmann::ordered_json::array()}};
  if (peft) { j["params"] = peft->all; j["trainable"] = peft->trainable; }
  if (const auto moe = tools::moe_counts_of(*c.entry, c.opts)) { j["total_params"] = moe->total; j["active_params"] = moe->active; }
  for (const auto& v : views) j["budgets"].push_back(budget_json(v));
  std::cout << j.dump(2) << "\n";
}

/// --format csv: one column per device.
inline void print_csv(const std::vector<tools::budget_view>& views) {
  std::string out = "component";
  for (const auto& v : views) out += "," + v.device;
  out += "\n";
  const auto first = csv_rows(views.front());
  for (std::size_t r = 0; r < first.size(); ++r) {
    out += first[r].first;
    for (const auto& v : views) out += "," + std::to_string(csv_rows(v)[r].second);
    out += "\n";
  }
  out += "fits";
  for (const auto& v : views) out += std::string(",") + (v.fits ? "yes" : "no");
  if (views.front().largest_micro_batch >= 0) {
    out += "\nlargest_micro_batch";
    for (const auto& v : views) out += "," + std::to_string(v.largest_micro_batch);
  }
  std::cout << out << "\n";
}

}  // namespace gpubudget::tools
