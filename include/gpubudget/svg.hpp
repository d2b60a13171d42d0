// gpubudget/svg.hpp — a memory timeline (timeline.hpp) as a picture: one SVG file, no script.
//
//   std::ofstream("step.svg") << timeline_svg(timeline(model, plan, devices::t4), "my model");
//
// Live tensor bytes over one training step (forward, backward, optimizer.step()), stacked by
// category; the peak marked with the record that causes it; the device's capacity as a red line
// and, dashed, the part of it left to tensors once the CUDA context, workspaces, allocator
// rounding and fragmentation reserve are taken (the stack crossing it is a budget that does not
// fit); phase boundaries; a byte axis in KiB/MiB/GiB; a legend with each category at the peak.
// Run time only (std::string).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gpubudget/svg/plot.hpp>
#include <gpubudget/report.hpp>
#include <gpubudget/timeline.hpp>

namespace gpubudget {

/// A record as the picture names it: its module name (or its nearest named block's), its op and
/// its index ("layer4 / conv2d #57", "fc / linear #60"); empty for -1 (the teacher, step()).
inline std::string record_label(const memory_timeline& t, std::int32_t record) {
  if (record < 0 || static_cast<std::size_t>(record) >= t.records.size()) return "";
  const auto& r = t.records;
  const auto i = static_cast<std::size_t>(record);
  std::string op(detail::op_name(r[i]));
  std::string where = r[i].name ? std::string(r[i].name) : "";
  for (std::size_t j = i; where.empty() && j-- > 0;)  // the closest enclosing record with a name
    if (r[j].name && j + static_cast<std::size_t>(r[j].span) > i) where = r[j].name;
  return (where.empty() ? op : where + " / " + op) + " #" + std::to_string(record);
}

/// `t` as an SVG picture (see the top of this file); `title` heads it (the model's name, say).
inline std::string timeline_svg(const memory_timeline& t, std::string_view title = {}) {
  const detail::svg_frame f{};
  const auto& b = t.budget;
  const auto peak = b.peak_tensor_bytes();
  const detail::byte_axis axis(1.04 * static_cast<double>(peak > b.capacity ? peak : b.capacity));
  const detail::phase_layout at(t, f.left, f.plot_width());
  std::string head = std::string(title.empty() ? "" : std::string(title) + ": ") + describe(b);
  std::string fit = "live tensors at the peak " + format_bytes(peak) + "; device total " + format_bytes(b.total()) + " of " +
                    format_bytes(b.capacity) + (fits(b) ? ": fits" : ": does not fit");
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + detail::coord(f.width) + "\" height=\"" +
                  detail::coord(f.height) + "\" viewBox=\"0 0 " + detail::coord(f.width) + " " + detail::coord(f.height) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<title>" + detail::escape_xml(head) + "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  s += "<text x=\"" + detail::coord(f.left) + "\" y=\"24\" font-size=\"15\" font-weight=\"bold\">" + detail::escape_xml(head) + "</text>\n";
  s += "<text x=\"" + detail::coord(f.left) + "\" y=\"44\">" + detail::escape_xml(fit) + "</text>\n";
  s += detail::svg_legend(t, f) + detail::svg_axes(f, axis) + detail::svg_areas(t, f, axis, at) + detail::svg_phases(t, f, at) +
       detail::svg_capacity(b, f, axis) + detail::svg_peak(t, f, axis, at, record_label(t, t.points.empty() ? -1 : t.points[t.peak_index()].record));
  return s + "</svg>\n";
}

}  // namespace gpubudget
