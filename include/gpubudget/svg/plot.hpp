// gpubudget/svg/plot.hpp — svg.hpp's own pieces (namespace detail): escaping, byte
// axes, the horizontal layout of the step's phases, the moments that fit the plot's width, and
// each layer of the picture (axes, stacked areas, phases, capacity, peak, legend).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <gpubudget/check.hpp>
#include <gpubudget/timeline.hpp>
#include <gpubudget/units.hpp>

namespace gpubudget::detail {

/// `s` safe inside SVG text and attribute values.
inline std::string escape_xml(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// A coordinate with one decimal (what SVG needs at screen resolution).
inline std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

/// The byte axis: a binary unit that suits `top` bytes, a round tick step and the axis' end.
struct byte_axis {
  double unit = 1;
  const char* unit_name = "B";
  double step = 1;  ///< bytes between ticks
  double top = 1;   ///< bytes at the top of the plot (a whole number of steps)

  explicit byte_axis(double highest) {
    if (highest >= static_cast<double>(GiB)) unit = static_cast<double>(GiB), unit_name = "GiB";
    else if (highest >= static_cast<double>(MiB)) unit = static_cast<double>(MiB), unit_name = "MiB";
    else if (highest >= static_cast<double>(KiB)) unit = static_cast<double>(KiB), unit_name = "KiB";
    const double rough = highest / unit / 5, magnitude = std::pow(10.0, std::floor(std::log10(rough > 0 ? rough : 1)));
    double nice = 10;
    for (const double m : {1.0, 2.0, 2.5, 5.0})
      if (rough <= m * magnitude) { nice = m; break; }
    step = nice * magnitude * unit;
    top = std::ceil(highest / step) * step;
    if (top <= 0) top = step;
  }
  /// A tick's label: "2.5 GiB".
  std::string label(double bytes) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g %s", bytes / unit, unit_name);
    return buf;
  }
};

/// Where each moment goes across the plot: the forward/backward moments share the width by
/// count; the teacher's forward and optimizer.step(), a few moments each, get a fixed share so
/// that they can be seen.
struct phase_layout {
  double left = 0, width = 1;
  std::size_t first_walk = 0, end_walk = 0, count = 0;
  double teacher_share = 0, step_share = 0;

  phase_layout(const memory_timeline& t, double plot_left, double plot_width)
      : left(plot_left), width(plot_width), end_walk(t.points.size()), count(t.points.size()) {
    while (first_walk < count && t.points[first_walk].phase == step_phase::teacher_forward) ++first_walk;
    while (end_walk > first_walk && t.points[end_walk - 1].phase == step_phase::optimizer_step) --end_walk;
    teacher_share = first_walk > 0 ? 0.04 : 0;
    step_share = end_walk < count ? 0.06 : 0;
  }
  /// The x of moment `k` (its left edge, in a phase drawn by count).
  double x(std::size_t k) const {
    const double walk_share = 1 - teacher_share - step_share;
    if (k < first_walk) return left + width * teacher_share * static_cast<double>(k) / static_cast<double>(first_walk);
    if (k >= end_walk) {
      const auto n = static_cast<double>(count - end_walk - 1);  // its last moment at the right edge
      return left + width * (1 - step_share + (n > 0 ? step_share * static_cast<double>(k - end_walk) / n : 0));
    }
    const auto n = static_cast<double>(end_walk - first_walk);
    return left + width * (teacher_share + walk_share * static_cast<double>(k - first_walk) / n);
  }
};

/// The moments drawn: per pixel column the highest one (so no peak is lost), and every phase's
/// first and last moment (so boundaries stay sharp).
inline std::vector<std::size_t> moments_to_draw(const memory_timeline& t, const phase_layout& at) {
  std::vector<std::size_t> picked;
  long column = -1;
  for (std::size_t k = 0; k < t.points.size(); ++k) {
    const bool edge = k == 0 || k + 1 == t.points.size() || t.points[k].phase != t.points[k - 1].phase ||
                      t.points[k].micro_batch != t.points[k - 1].micro_batch || t.points[k].phase != t.points[k + 1].phase;
    const auto c = std::lround(at.x(k));
    if (edge || c != column || picked.empty()) {
      picked.push_back(k), column = c;
    } else if (t.points[k].total() > t.points[picked.back()].total()) {
      picked.back() = k;
    }
  }
  return picked;
}

/// The categories from the bottom of the stack up, with their colours (none of them the
/// capacity line's red).
struct category {
  const char* label;
  const char* colour;
  std::int64_t timeline_point::*bytes;
};
inline constexpr category stacked_categories[] = {
    {"Parameters", "#4e79a7", &timeline_point::parameters},
    {"Optimizer state", "#f28e2b", &timeline_point::optimizer_state},
    {"Gradients", "#59a14f", &timeline_point::gradients},
    {"Saved activations", "#b07aa1", &timeline_point::saved_activations},
    {"Temporaries + other", "#bab0ac", &timeline_point::other},
};
inline constexpr const char* capacity_colour = "#ff0000";

/// The name of a step phase as the picture labels it.
inline std::string phase_name(const timeline_point& p, bool accumulates) {
  switch (p.phase) {
    case step_phase::teacher_forward: return "teacher";
    case step_phase::optimizer_step: return "optimizer.step()";
    case step_phase::forward: return p.micro_batch == 0 ? (accumulates ? "forward (micro-batch 1)" : "forward") : "forward (micro-batch 2..)";
    case step_phase::backward: return "backward";
  }
  return "?";
}


/// The plot's frame: the picture's size and the plot area inside it.
struct svg_frame {
  double width = 1000, height = 580;
  double left = 84, right = 970, top = 92, bottom = 520;
  double plot_width() const { return right - left; }
};

/// y of `bytes` on `axis`.
inline double y_of(const svg_frame& f, const byte_axis& axis, double bytes) { return f.bottom - (f.bottom - f.top) * bytes / axis.top; }

/// Grid lines and labels of the byte axis, the x axis and its caption.
inline std::string svg_axes(const svg_frame& f, const byte_axis& axis) {
  std::string s;
  for (double v = 0; v <= axis.top * 1.0001; v += axis.step) {
    const auto y = coord(y_of(f, axis, v));
    s += "<line x1=\"" + coord(f.left) + "\" y1=\"" + y + "\" x2=\"" + coord(f.right) + "\" y2=\"" + y + "\" stroke=\"#e4e4e4\"/>\n";
    s += "<text x=\"" + coord(f.left - 6) + "\" y=\"" + y + "\" dy=\"4\" text-anchor=\"end\">" + axis.label(v) + "</text>\n";
  }
  s += "<line x1=\"" + coord(f.left) + "\" y1=\"" + coord(f.bottom) + "\" x2=\"" + coord(f.right) + "\" y2=\"" + coord(f.bottom) +
       "\" stroke=\"#333\"/>\n<line x1=\"" + coord(f.left) + "\" y1=\"" + coord(f.top) + "\" x2=\"" + coord(f.left) + "\" y2=\"" +
       coord(f.bottom) + "\" stroke=\"#333\"/>\n";
  s += "<text x=\"" + coord((f.left + f.right) / 2) + "\" y=\"" + coord(f.bottom + 22) +
       "\" text-anchor=\"middle\">moments of one training step, in the order they run (each allocation and each op's temporaries)</text>\n";
  s += "<text transform=\"translate(16 " + coord((f.top + f.bottom) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">live tensor bytes</text>\n";
  return s;
}

/// One filled polygon per category, stacked in stacked_categories' order, and the total's line.
inline std::string svg_areas(const memory_timeline& t, const svg_frame& f, const byte_axis& axis, const phase_layout& at) {
  const auto picked = moments_to_draw(t, at);
  std::vector<double> below(picked.size(), 0.0), above(picked.size(), 0.0);
  std::string s;
  for (const auto& c : stacked_categories) {
    std::string pts;
    for (std::size_t k = 0; k < picked.size(); ++k) {
      above[k] = below[k] + static_cast<double>(t.points[picked[k]].*c.bytes);
      pts += coord(at.x(picked[k])) + "," + coord(y_of(f, axis, above[k])) + " ";
    }
    for (std::size_t k = picked.size(); k-- > 0;) pts += coord(at.x(picked[k])) + "," + coord(y_of(f, axis, below[k])) + " ";
    s += "<polygon fill=\"" + std::string(c.colour) + "\" points=\"" + pts + "\"/>\n";
    below = above;
  }
  // the total as a line: an op's temporaries last one moment, a spike thinner than a pixel
  std::string top;
  for (std::size_t k = 0; k < picked.size(); ++k) top += coord(at.x(picked[k])) + "," + coord(y_of(f, axis, below[k])) + " ";
  return s + "<polyline fill=\"none\" stroke=\"#444\" stroke-width=\"1\" points=\"" + top + "\"/>\n";
}

/// A dashed vertical line and a label where each phase (or micro-batch) begins.
inline std::string svg_phases(const memory_timeline& t, const svg_frame& f, const phase_layout& at) {
  std::string s;
  const bool accumulates = t.budget.plan.accumulation_steps() > 1 && !t.budget.plan.inference;
  double label_end = -1e9;
  int row = 0;
  for (std::size_t k = 0; k < t.points.size(); ++k) {
    if (k > 0 && t.points[k].phase == t.points[k - 1].phase && t.points[k].micro_batch == t.points[k - 1].micro_batch) continue;
    const double x = at.x(k);
    if (k > 0)
      s += "<line x1=\"" + coord(x) + "\" y1=\"" + coord(f.top) + "\" x2=\"" + coord(x) + "\" y2=\"" + coord(f.bottom) +
           "\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>\n";
    const auto name = phase_name(t.points[k], accumulates);
    row = x < label_end + 4 ? row + 1 : 0;  // a narrow phase: its label one line lower
    const double text_width = 6.5 * static_cast<double>(name.size());
    const bool at_right_edge = x + 3 + text_width > f.right;  // optimizer.step(): ends at the edge
    label_end = at_right_edge ? f.right : x + 3 + text_width;
    s += "<text x=\"" + coord(at_right_edge ? f.right - 3 : x + 3) + "\" y=\"" + coord(f.top + 13 + 13 * row) + "\"" +
         (at_right_edge ? " text-anchor=\"end\"" : "") + " fill=\"#333\">" + name + "</text>\n";
  }
  return s;
}

/// The capacity (solid red) and what it leaves to tensors (dashed), each labelled.
inline std::string svg_capacity(const memory_budget& b, const svg_frame& f, const byte_axis& axis) {
  const auto cap_y = std::floor(y_of(f, axis, static_cast<double>(b.capacity))) + 0.5;  // whole pixel rows
  std::string s = "<line x1=\"" + coord(f.left) + "\" y1=\"" + coord(cap_y) + "\" x2=\"" + coord(f.right) + "\" y2=\"" + coord(cap_y) +
                  "\" stroke=\"" + capacity_colour + "\" stroke-width=\"3\"/>\n";
  s += "<text x=\"" + coord(f.right - 4) + "\" y=\"" + coord(cap_y - 6) + "\" text-anchor=\"end\" fill=\"" + capacity_colour + "\">" +
       escape_xml(b.device_name) + " capacity " + format_bytes(b.capacity) + "</text>\n";
  const auto for_tensors = b.capacity - (b.total() - b.peak_tensor_bytes());
  if (for_tensors > 0) {
    const auto y = coord(y_of(f, axis, static_cast<double>(for_tensors)));
    s += "<line x1=\"" + coord(f.left) + "\" y1=\"" + y + "\" x2=\"" + coord(f.right) + "\" y2=\"" + y +
         "\" stroke=\"#a0522d\" stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>\n";
    const bool near_bottom = y_of(f, axis, static_cast<double>(for_tensors)) > f.bottom - 24;  // then its label above it
    s += "<text x=\"" + coord(f.left + 4) + "\" y=\"" + y + "\" dy=\"" + (near_bottom ? "-5" : "14") + "\" fill=\"#a0522d\">left to tensors " + format_bytes(for_tensors) +
         " (less context, workspace, rounding, fragmentation reserve)</text>\n";
  }
  return s;
}

/// A marker on the highest moment, labelled with its bytes and the record that causes it
/// (`peak_record`, as record_label names it).
inline std::string svg_peak(const memory_timeline& t, const svg_frame& f, const byte_axis& axis, const phase_layout& at,
                            const std::string& peak_record) {
  const auto k = t.peak_index();
  if (k >= t.points.size()) return "";
  const auto& p = t.points[k];
  const double x = at.x(k), y = y_of(f, axis, static_cast<double>(p.total()));
  std::string what = p.phase == step_phase::optimizer_step ? "optimizer.step()"
                     : p.phase == step_phase::teacher_forward ? "the teacher's forward"
                     : std::string(p.phase == step_phase::backward ? "backward of " : "forward of ") + peak_record;
  double label_y = y - 12 < f.top + 40 ? f.top + 40 : y - 12;
  const double capacity_y = y_of(f, axis, static_cast<double>(t.budget.capacity));
  if (label_y > capacity_y - 4 && label_y < capacity_y + 16) label_y = capacity_y - 22;  // clear of the line and its label
  std::string s = "<circle cx=\"" + coord(x) + "\" cy=\"" + coord(y) + "\" r=\"5\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\"/>\n";
  s += "<text x=\"" + coord(x < (f.left + f.right) / 2 ? x + 8 : x - 8) + "\" y=\"" + coord(label_y) + "\" text-anchor=\"" +
       (x < (f.left + f.right) / 2 ? "start" : "end") + "\" font-weight=\"bold\">peak " + format_bytes(p.total()) + ": " +
       escape_xml(what) + "</text>\n";
  return s;
}

/// The legend: each category's colour and its bytes at the peak (a second row when the first
/// is full).
inline std::string svg_legend(const memory_timeline& t, const svg_frame& f) {
  const auto k = t.peak_index();
  double x = f.left, y = 56;
  std::string s = "<text x=\"" + coord(x) + "\" y=\"" + coord(y + 10) + "\" fill=\"#555\">At the peak:</text>\n";
  x += 84;
  for (const auto& c : stacked_categories) {
    const std::string text = std::string(c.label) + " " + (k < t.points.size() ? format_bytes(t.points[k].*c.bytes) : "");
    const double width = 30 + 6.2 * static_cast<double>(text.size());
    if (x + width > f.right + 20) x = f.left + 84, y += 18;
    s += "<rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"12\" height=\"12\" fill=\"" + c.colour + "\"/>\n";
    s += "<text x=\"" + coord(x + 16) + "\" y=\"" + coord(y + 10) + "\">" + escape_xml(text) + "</text>\n";
    x += width;
  }
  return s;
}

}  // namespace gpubudget::detail
