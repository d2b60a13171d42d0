// gpubudget/report.hpp — budget tables: one configuration's breakdown, per-block detail, and
// comparisons across configurations or devices, as Markdown or CSV.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <gpubudget/budget.hpp>
#include <gpubudget/check.hpp>

namespace gpubudget {

/// `part` as a share of `whole`, e.g. "12.5 %" (one decimal; 0 when `whole` is not positive).
inline std::string format_percent(std::int64_t part, std::int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

namespace detail {
inline std::string_view precision_name(precision_mode p) {
  switch (p) {
    case precision_mode::fp32: return "fp32";
    case precision_mode::amp_fp16: return "AMP fp16";
    case precision_mode::amp_bf16: return "AMP bf16";
    case precision_mode::pure_fp16: return "fp16 + fp32 master";
    case precision_mode::pure_bf16: return "bf16 + fp32 master";
  }
  return "?";
}
inline std::string_view optimizer_name(optimizer_kind o) {
  switch (o) {
    case optimizer_kind::none: return "none";
    case optimizer_kind::sgd: return "SGD";
    case optimizer_kind::sgd_momentum: return "SGD+momentum";
    case optimizer_kind::adam: return "Adam";
    case optimizer_kind::adamw: return "AdamW";
  }
  return "?";
}
inline std::string_view op_name(const layer& l) {
  switch (l.kind) {
    case node_kind::leaf: return l.op ? l.op->name(l) : "?";
    case node_kind::sequence: return l.flags.checkpoint ? "checkpointed" : (l.flags.frozen ? "frozen" : "sequential");
    case node_kind::residual: return "residual";
    case node_kind::parallel: return "parallel";
    case node_kind::repeat: return "repeat";
  }
  return "?";
}
}  // namespace detail

/// One line describing the configuration.
inline std::string describe(const memory_budget& b) {
  std::string s = std::string(b.device_name) + ", batch " + std::to_string(b.plan.batch);
  if (b.plan.micro() != b.plan.batch) s += " (micro " + std::to_string(b.plan.micro()) + " x " + std::to_string(b.plan.accumulation_steps()) + " accumulation)";
  s += ", " + std::string(detail::precision_name(b.plan.precision));
  s += b.plan.inference ? ", inference" : ", " + std::string(detail::optimizer_name(b.plan.optimizer));
  return s;
}

/// A budget's components in the style of the seed reports: component, bytes, share of total.
/// Rows are grouped as resident state, the step's peak (live tensors), then the device-side
/// terms; "live tensor bytes at peak" and "device total" are separate named lines.
inline std::string markdown_table(const memory_budget& b) {
  std::string out;
  const auto total = b.total();
  auto row = [&](std::string_view name, std::int64_t bytes) {
    out += "| " + std::string(name) + " | " + format_bytes(bytes) + " | " + format_percent(bytes, total) + " |\n";
  };
  out += "**" + describe(b) + "**\n\n";
  out += "| Component | Memory | Share |\n|---|---:|---:|\n";
  row("Parameters (" + std::to_string(b.params) + ", " + std::to_string(b.trainable) + " trainable)", b.parameters);
  if (b.buffers) row("Buffers", b.buffers);
  if (b.master_weights) row("FP32 master weights", b.master_weights);
  if (b.optimizer_state) row("Optimizer state", b.optimizer_state);
  if (b.ema) row("EMA copy", b.ema);
  if (b.teacher) row("Teacher (on GPU)", b.teacher);
  row("Input batch", b.input_batch);
  row("Gradients (at peak)", b.gradients_at_peak);
  row("Activations + temporaries (at peak)", b.activations_at_peak());
  row("CUDA context", b.cuda_context);
  row("cuBLAS + cuDNN workspace", b.workspace());
  row("Allocator rounding (512 B blocks)", b.allocator_rounding);
  row("Fragmentation reserve (" + std::to_string(b.plan.fragmentation_percent) + " %)", b.fragmentation);
  out += "| **Live tensor bytes at peak** | **" + format_bytes(b.peak_tensor_bytes()) + "** | " + format_percent(b.peak_tensor_bytes(), total) + " |\n";
  out += "| **Device total** | **" + format_bytes(total) + "** | 100.0 % |\n";
  out += "| Capacity | " + format_bytes(b.capacity) + " | |\n";
  out += "| Headroom | " + format_bytes(b.headroom()) + " | " + (fits(b) ? "fits" : "**does not fit**") + " |\n";
  out += "\nStep detail: saved for backward " + format_bytes(b.saved_activations) + ", after forward " +
         format_bytes(b.after_forward) + ", forward peak " + format_bytes(b.forward_peak) + ", forward+backward peak " +
         format_bytes(b.fwd_bwd_peak) + ", step peak " + format_bytes(b.step_peak) + " (optimizer temporaries " +
         format_bytes(b.optimizer_temporaries) + ").\n";
  return out;
}

/// The table above plus where the peak happens (which record's forward or backward).
template <std::size_t N>
std::string markdown_table(const model_budget<N>& b) {
  std::string out = markdown_table(static_cast<const memory_budget&>(b));
  if (b.peak_record >= 0 && static_cast<std::size_t>(b.peak_record) < N) {
    const auto& L = b.nodes[static_cast<std::size_t>(b.peak_record)];
    out += "Peak: during the " + std::string(b.peak_in_backward ? "backward" : "forward") + " of record #" +
           std::to_string(b.peak_record) + " (" + (L.name ? std::string(L.name) : std::string(detail::op_name(L))) + ").\n";
  } else if (b.peak_record < 0 && b.step_peak > b.fwd_bwd_peak) {
    out += "Peak: during optimizer.step().\n";
  }
  return out;
}

/// The same as CSV: component,bytes.
inline std::string csv_table(const memory_budget& b) {
  std::string out = "component,bytes\n";
  auto row = [&](std::string_view name, std::int64_t bytes) { out += std::string(name) + "," + std::to_string(bytes) + "\n"; };
  row("parameters", b.parameters);
  row("buffers", b.buffers);
  row("master_weights", b.master_weights);
  row("optimizer_state", b.optimizer_state);
  row("ema", b.ema);
  row("teacher", b.teacher);
  row("input_batch", b.input_batch);
  row("gradients_at_peak", b.gradients_at_peak);
  row("activations_at_peak", b.activations_at_peak());
  row("cuda_context", b.cuda_context);
  row("workspace", b.workspace());
  row("allocator_rounding", b.allocator_rounding);
  row("fragmentation", b.fragmentation);
  row("live_tensor_bytes_at_peak", b.peak_tensor_bytes());
  row("device_total", b.total());
  row("capacity", b.capacity);
  return out;
}

/// Per-block table: the model's top-level blocks (children of the root) with their output,
/// parameters (trainable), what training them keeps resident (gradient + optimizer state) and
/// the bytes they save for backward.
template <std::size_t N>
std::string layer_table(const model_budget<N>& b) {
  const bool pure16 = b.plan.precision == precision_mode::pure_fp16 || b.plan.precision == precision_mode::pure_bf16;
  const std::int64_t per_trainable = (pure16 ? 2 + 4 : 4) + 4 * detail::optimizer_state_per_param(b.plan.optimizer);
  std::string out = "| # | Block | Output | Params (trainable) | Grad + optimizer | Saved for backward |\n|---:|---|---|---:|---:|---:|\n";
  if constexpr (N > 0) {
    const std::int32_t end = b.nodes[0].span;
    int row = 0;
    for (std::int32_t c = 1; c < end; c += b.nodes[static_cast<std::size_t>(c)].span) {
      const auto& L = b.nodes[static_cast<std::size_t>(c)];
      const auto& st = b.layers[static_cast<std::size_t>(c)];
      std::string name = L.name ? L.name : std::string(detail::op_name(L));
      if (L.kind == node_kind::repeat) name += " x" + std::to_string(L.count);
      const auto trainable = b.plan.inference ? 0 : st.trainable;
      out += "| " + std::to_string(row++) + " | " + name + " | " + to_string(st.output) + " | " + std::to_string(st.params) + " (" +
             std::to_string(trainable) + ") | " + format_bytes(trainable * per_trainable) + " | " + format_bytes(st.saved_bytes) + " |\n";
    }
  }
  return out;
}

/// One row of a comparison.
struct labelled_budget {
  std::string label;
  memory_budget budget;
};

/// Rows = configurations (or devices); columns = the main terms and the verdict.
inline std::string comparison_table(const std::vector<labelled_budget>& rows) {
  std::string out =
      "| Configuration | Device | Params + optimizer | Activations (peak) | Live tensors (peak) | Device total | Capacity | Headroom | Fits |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : rows) {
    const auto& b = r.budget;
    out += "| " + r.label + " | " + std::string(b.device_name) + " | " +
           format_bytes(b.parameters + b.master_weights + b.optimizer_state) + " | " + format_bytes(b.activations_at_peak()) +
           " | " + format_bytes(b.peak_tensor_bytes()) + " | " + format_bytes(b.total()) + " | " + format_bytes(b.capacity) +
           " | " + format_bytes(b.headroom()) + " | " + (fits(b) ? "yes" : "**no**") + " |\n";
  }
  return out;
}

inline std::string comparison_csv(const std::vector<labelled_budget>& rows) {
  std::string out = "configuration,device,params_optimizer,activations_peak,live_tensors_peak,device_total,capacity,fits\n";
  for (const auto& r : rows) {
    const auto& b = r.budget;
    out += r.label + "," + std::string(b.device_name) + "," + std::to_string(b.parameters + b.master_weights + b.optimizer_state) +
           "," + std::to_string(b.activations_at_peak()) + "," + std::to_string(b.peak_tensor_bytes()) + "," +
           std::to_string(b.total()) + "," + std::to_string(b.capacity) + "," + (fits(b) ? "yes" : "no") + "\n";
  }
  return out;
}

}  // namespace gpubudget
