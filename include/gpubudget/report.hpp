// gpubudget/report.hpp — budget tables: one configuration's breakdown, per-block detail, and
// comparisons across configurations or devices, as Markdown or CSV.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <gpubudget/budget.hpp>
#include <gpubudget/check.hpp>
#include <gpubudget/planner.hpp>

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
    case optimizer_kind::adam8bit: return "Adam8bit";
    case optimizer_kind::adamw8bit: return "AdamW8bit";
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
    case node_kind::encoder_decoder: return "encoder_decoder";
    case node_kind::modulated: return "modulated";
  }
  return "?";
}
}  // namespace detail

/// Every module path of `m`, as training::train_only and `--freeze-all-but` take them, in order;
/// the copies of a repeated block appear once, as a range (`layer4.{1..2}.conv3`).
template <std::size_t N>
std::vector<std::string> module_names(const model<N>& m) {
  std::vector<std::string> out;
  if constexpr (N > 0) detail::list_module_paths(m.records.data(), 0, "", out);
  return out;
}

/// Does `name` select a module of `m` (the rule of training::train_only: detail/module_names.hpp)?
template <std::size_t N>
bool names_a_module(const model<N>& m, std::string_view name) {
  detail::module_selection found;
  return detail::select_modules(m.records.data(), static_cast<std::int32_t>(N), name.data(), name.data() + name.size(), found) ==
         detail::name_selects::modules;
}

/// The sub-modules of the op that `name` less its last component names ("q_proj, k_proj,
/// v_proj, o_proj" for `model.layers.31.self_attn.x_proj` in a Llama), for a message; "" when
/// it names no op with named parts.
template <std::size_t N>
std::string part_names_below(const model<N>& m, std::string_view name) {
  return detail::part_names_below(m.records.data(), static_cast<std::int32_t>(N), name);
}

/// One line describing the configuration.
inline std::string describe(const memory_budget& b) {
  std::string s = std::string(b.device_name) + ", batch " + std::to_string(b.plan.batch);
  if (b.plan.micro() != b.plan.batch) s += " (micro " + std::to_string(b.plan.micro()) + " x " + std::to_string(b.plan.accumulation_steps()) + " accumulation)";
  s += ", " + (b.plan.updates_16_bit_weights() ? std::string(to_string(types_of(b.plan.precision).parameters)) + " parameters, no master copy"
                         : std::string(detail::precision_name(b.plan.precision)));
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
  for (const auto& c : components(b)) {
    if (!c.always_shown && c.bytes == 0) continue;
    std::string label(c.label);
    if (c.key == "parameters") label += " (" + std::to_string(b.parameter_count) + ", " + std::to_string(b.trainable_count) + " trainable)";
    if (c.key == "fragmentation")
      label = b.allocator_modelled ? "Allocator cache (caching allocator model)" : label + " (" + std::to_string(b.plan.fragmentation_percent) + " %)";
    row(label, c.bytes);
  }
  out += "| **Live tensor bytes at peak** | **" + format_bytes(b.peak_tensor_bytes()) + "** | " + format_percent(b.peak_tensor_bytes(), total) + " |\n";
  out += "| **Device total** | **" + format_bytes(total) + "** | 100.0 % |\n";
  out += "| Capacity | " + format_bytes(b.capacity) + " | |\n";
  // the capped replay can run a step whose uncapped cache would pass the capacity: under the cap
  // the allocator frees its cached segments and retries first (op_rules.md A9)
  const bool by_freeing_cache = fits(b) && b.headroom() < 0;
  out += "| Headroom | " + format_bytes(b.headroom()) + " | " +
         (by_freeing_cache ? "fits (the allocator frees its cache under the cap)" : fits(b) ? "fits" : "**does not fit**") + " |\n";
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
    const auto& L = b.records[static_cast<std::size_t>(b.peak_record)];
    out += "Peak: during the " + std::string(b.peak_in_backward ? "backward" : "forward") + " of record #" +
           std::to_string(b.peak_record) + " (" + (L.name ? detail::module_path_of(b.records.data(), b.peak_record) : std::string(detail::op_name(L))) + ").\n";
  } else if (b.peak_record < 0 && b.step_peak > b.fwd_bwd_peak) {
    out += "Peak: during optimizer.step().\n";
  }
  return out;
}

/// The same as CSV: component,bytes.
inline std::string csv_table(const memory_budget& b) {
  std::string out = "component,bytes\n";
  auto row = [&](std::string_view name, std::int64_t bytes) { out += std::string(name) + "," + std::to_string(bytes) + "\n"; };
  for (const auto& c : components(b)) row(c.key, c.bytes);
  row("live_tensor_bytes_at_peak", b.peak_tensor_bytes());
  row("device_total", b.total());
  row("capacity", b.capacity);
  return out;
}

namespace detail {
/// The module paths of the outermost named records inside record `i` (copies of repeats as
/// ranges), at most `limit` of them, "..." after.
inline void outermost_names(const layer* records, std::int32_t i, std::size_t limit, std::vector<std::string>& out) {
  for (std::int32_t c = i + 1; c < i + records[i].span && out.size() <= limit; c += records[c].span) {
    if (records[c].name) out.push_back(out.size() == limit ? "..." : copies_path(records[c], records[c].name));
    else outermost_names(records, c, limit, out);
  }
}

/// A top-level block's label: its module path (a named repeat's copies as PyTorch numbers them,
/// model.layers.{0..31}); for an unnamed block, the named modules it holds ("conv1, bn1, relu,
/// maxpool"), else its op's name ("input", "repeat x12").
inline std::string block_label(const layer* records, std::int32_t c) {
  const layer& L = records[c];
  if (L.name) return copies_path(L, L.name);
  std::vector<std::string> inside;
  outermost_names(records, c, 4, inside);
  std::string label;
  for (const auto& n : inside) label += (label.empty() ? "" : ", ") + n;
  if (!label.empty()) return label;
  return L.kind == node_kind::repeat ? "repeat x" + std::to_string(L.count) : std::string(op_name(L));
}
}  // namespace detail

/// Per-block table: the model's top-level blocks (children of the root), labelled by their
/// PyTorch module paths (block_label), with their output, parameters (trainable), what training
/// them keeps resident (gradient + optimizer state) and the bytes they save for backward.
template <std::size_t N>
std::string layer_table(const model_budget<N>& b) {
  // a trainable parameter keeps its gradient (parameter type), an fp32 master copy in pure
  // 16-bit training, and its optimizer state
  const auto types = types_of(b.plan.precision);
  const auto state_elements = detail::optimizer_state_bytes_per_param(b.plan.optimizer) / 4;  // is_8bit: 0 (its bytes are exact elsewhere)
  const std::int64_t per_trainable = bytes_per_element(types.parameters) + (types.pure16 && !b.plan.updates_16_bit_weights() ? 4 : 0) +
                                     (is_8bit(b.plan.optimizer) ? 2 : state_elements * bytes_per_element(b.plan.optimizer_state_type()));
  std::string out = "| # | Block | Output | Params (trainable) | Grad + optimizer | Saved for backward |\n|---:|---|---|---:|---:|---:|\n";
  if constexpr (N > 0) {
    const std::int32_t end = b.records[0].span;
    int row = 0;
    for (std::int32_t c = 1; c < end; c += b.records[static_cast<std::size_t>(c)].span) {
      const auto& st = b.per_record[static_cast<std::size_t>(c)];
      const std::string name = detail::block_label(b.records.data(), c);
      const auto trainable = b.plan.inference ? 0 : st.trainable_count;
      out += "| " + std::to_string(row++) + " | " + name + " | " + to_string(st.output) + " | " + std::to_string(st.parameter_count) + " (" +
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

// --- the planner's answers ------------------------------------------------------------------------------------

/// What a plan changes, in words ("as configured" when nothing).
inline std::string describe_changes(const fit_plan& r, const training& base) {
  std::string s;
  auto add = [&](const std::string& t) { s += (s.empty() ? "" : ", ") + t; };
  const auto& p = r.plan;
  if (has(r.remedies, remedy::model_variant) || (r.member != 0 && !r.member_label.empty())) add(std::string(r.member_label));
  if (p.batch != base.batch) add("batch " + std::to_string(base.batch) + " -> " + std::to_string(p.batch));
  if (p.micro() != base.micro() && p.batch == base.batch)
    add("micro-batch " + std::to_string(p.micro()) + " x " + std::to_string(p.accumulation_steps()) + " accumulation");
  if (p.precision != base.precision) add(std::string(detail::precision_name(p.precision)));
  if (p.checkpoint_blocks && !base.checkpoint_blocks) add("checkpoint every repeated block");
  if (p.checkpoint_all && !base.checkpoint_all) add("checkpoint every top-level block");
  if (!detail::same_text(p.train_only, base.train_only)) add(std::string("train only '") + (p.train_only ? p.train_only : "") + "'");
  if (p.teacher.offloaded_to_cpu != base.teacher.offloaded_to_cpu) add("teacher offloaded to CPU");
  if (p.optimizer != base.optimizer) add(std::string(detail::optimizer_name(base.optimizer)) + " -> " + std::string(detail::optimizer_name(p.optimizer)));
  return s.empty() ? "as configured" : s;
}

namespace detail {
inline std::string permille(std::int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", static_cast<double>(v) / 10.0);
  return buf;
}
inline std::string plan_row(const std::string& rank, const fit_plan& r, const training& base) {
  return "| " + rank + " | " + describe_changes(r, base) + " | " + std::to_string(r.plan.micro()) + " x " +
         std::to_string(r.plan.accumulation_steps()) + " | " + format_bytes(r.total) + " | " + format_bytes(r.headroom()) + " | " +
         (r.fits ? "yes" : "**no**") + " | " + permille(r.recompute_permille) + " | " + std::to_string(r.extra_steps) + " | " +
         permille(r.lost_capacity_permille) + " | " + permille(r.penalty_permille) + " | " + std::to_string(r.cost) + " |\n";
}
}  // namespace detail

inline constexpr std::string_view plan_table_header =
    "| Rank | Change | Micro x accumulation | Device total | Headroom | Fits | Recompute | Extra steps | Lost capacity | Penalty | Cost (permille) |\n"
    "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n";

/// The configuration and every fitting plan, cheapest first, as a Markdown table; `extra` rows
/// (e.g. the plan a report chose, scored with score_plan) are appended with their labels.
template <std::size_t Capacity>
std::string plan_table(const fit_plans<Capacity>& plans, const std::vector<std::pair<std::string, fit_plan>>& extra = {}) {
  const auto& base = plans.configured.plan;
  std::string out = "**" + std::string(plans.configured.member_label.empty() ? "model" : plans.configured.member_label) + ": " +
                    std::to_string(plans.count) + " fitting plan(s) from " + std::to_string(plans.combinations) + " combinations, " +
                    std::to_string(plans.simulations) + " budget simulations" + (plans.truncated ? " (search truncated)" : "") + "**\n\n";
  out += plan_table_header;
  out += detail::plan_row("configured", plans.configured, base);
  for (std::size_t k = 0; k < plans.count; ++k) out += detail::plan_row(std::to_string(k + 1), plans.plans[k], base);
  for (const auto& [label, r] : extra) out += detail::plan_row(label, r, base);
  return out;
}

}  // namespace gpubudget
