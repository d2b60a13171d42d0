// gpubudget/probe/budget_check.hpp — allocate a budget on a device, category by category, and
// report estimate vs device. Pure logic over `probe::device`; no CUDA header.
//
// Order: every resident category first (state that lives across steps), then the transient
// categories that together make the step's peak — so a failure names the first category that
// no longer fits on top of everything before it. Everything allocated is released before
// check_budget returns, also when an allocation fails or the device throws (RAII).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpubudget/probe/device_interface.hpp>

namespace gpubudget::probe {

enum class phase : std::uint8_t { resident, transient };

constexpr std::string_view to_string(phase p) { return p == phase::resident ? "resident" : "transient"; }

/// One line of a budget: what the estimate says this category needs. `name` must outlive the
/// check call only; results copy it.
struct category {
  std::string_view name;
  std::int64_t bytes = 0;
  phase ph = phase::resident;
};

enum class category_outcome : std::uint8_t { allocated, empty, failed, not_attempted };

constexpr std::string_view to_string(category_outcome o) {
  switch (o) {
    case category_outcome::allocated: return "allocated";
    case category_outcome::empty: return "empty";
    case category_outcome::failed: return "FAILED";
    case category_outcome::not_attempted: return "not attempted";
  }
  return "?";
}

struct category_result {
  std::string name;
  phase ph = phase::resident;
  std::int64_t asked = 0;     // bytes requested (the estimate)
  std::int64_t observed = 0;  // free-memory drop the allocation caused
  std::int64_t free_before = 0;
  category_outcome outcome = category_outcome::not_attempted;
  /// observed / asked in percent (100 = the device charged exactly the estimate).
  [[nodiscard]] double percent() const {
    return asked > 0 ? 100.0 * static_cast<double>(observed) / static_cast<double>(asked) : 0.0;
  }
};

/// The first allocation that did not fit.
struct budget_failure {
  std::string category;
  phase ph = phase::resident;
  std::int64_t asked = 0;           // bytes the category asked for
  std::int64_t free = 0;            // bytes free on the device at that moment
  std::int64_t allocated_before = 0;  // bytes of the categories already holding memory
  alloc_status status = alloc_status::out_of_memory;
  std::string message;
};

struct budget_check_options {
  /// Bytes that must stay free at the peak (e.g. a fragmentation reserve); 0 = none.
  std::int64_t min_headroom_bytes = 0;
};

struct budget_check_result {
  std::string device_name;
  compute_capability capability;
  memory_info start;  // before the first allocation
  memory_info peak;   // with everything allocated (or at the failure)
  memory_info end;    // after releasing everything
  std::vector<category_result> rows;  // in allocation order
  std::optional<budget_failure> failure;
  std::int64_t min_headroom_bytes = 0;

  [[nodiscard]] std::int64_t asked(phase p) const {
    std::int64_t s = 0;
    for (const auto& r : rows) s += r.ph == p ? r.asked : 0;
    return s;
  }
  [[nodiscard]] std::int64_t observed(phase p) const {
    std::int64_t s = 0;
    for (const auto& r : rows) s += r.ph == p ? r.observed : 0;
    return s;
  }
  /// Asked bytes of the categories that were allocated (the base for observed / asked).
  [[nodiscard]] std::int64_t asked_allocated(phase p) const {
    std::int64_t s = 0;
    for (const auto& r : rows) s += (r.ph == p && r.outcome == category_outcome::allocated) ? r.asked : 0;
    return s;
  }
  [[nodiscard]] std::int64_t total_asked() const { return asked(phase::resident) + asked(phase::transient); }
  [[nodiscard]] std::int64_t total_observed() const {
    return observed(phase::resident) + observed(phase::transient);
  }
  /// Free bytes left at the step peak.
  [[nodiscard]] std::int64_t headroom() const { return peak.free; }
  [[nodiscard]] bool headroom_ok() const { return headroom() >= min_headroom_bytes; }
  /// Every category allocated and the reserve left free.
  [[nodiscard]] bool fits() const { return !failure && headroom_ok(); }
  /// Free memory not given back by the end (0 expected; drivers may keep small pools).
  [[nodiscard]] std::int64_t not_returned() const { return start.free - end.free; }
};

/// Categories in allocation order: resident first, then transient; stable within a phase.
inline std::vector<category> allocation_order(std::span<const category> cats) {
  std::vector<category> out;
  out.reserve(cats.size());
  for (const auto& c : cats) if (c.ph == phase::resident) out.push_back(c);
  for (const auto& c : cats) if (c.ph == phase::transient) out.push_back(c);
  return out;
}

/// Allocates `cats` on `dev` and reports estimate vs device. Throws std::invalid_argument for a
/// negative size; rethrows the device's exceptions after releasing what it allocated.
inline budget_check_result check_budget(device& dev, std::span<const category> cats,
                                        const budget_check_options& opt = {}) {
  for (const auto& c : cats)
    if (c.bytes < 0) throw std::invalid_argument("budget category '" + std::string(c.name) + "' has negative size");

  budget_check_result res;
  res.device_name = dev.name();
  res.capability = dev.capability();
  res.min_headroom_bytes = opt.min_headroom_bytes;
  res.start = dev.memory();

  std::vector<device_allocation> held;  // released in reverse order below, or by unwinding
  held.reserve(cats.size());
  std::int64_t allocated = 0;
  for (const auto& c : allocation_order(cats)) {
    category_result row{std::string(c.name), c.ph, c.bytes, 0, 0, category_outcome::not_attempted};
    if (c.bytes == 0) {
      row.outcome = category_outcome::empty;
    } else if (!res.failure) {
      row.free_before = dev.memory().free;
      alloc_result a = dev.allocate(c.bytes);
      if (a.ok()) {
        held.emplace_back(dev, a.handle);
        row.observed = row.free_before - dev.memory().free;
        row.outcome = category_outcome::allocated;
        allocated += c.bytes;
      } else {
        row.outcome = category_outcome::failed;
        res.failure = budget_failure{row.name, c.ph, c.bytes, row.free_before, allocated, a.status, a.message};
      }
    }
    res.rows.push_back(std::move(row));
  }
  res.peak = dev.memory();
  while (!held.empty()) held.pop_back();
  res.end = dev.memory();
  return res;
}

inline budget_check_result check_budget(device& dev, std::initializer_list<category> cats,
                                        const budget_check_options& opt = {}) {
  return check_budget(dev, std::span<const category>(cats.begin(), cats.size()), opt);
}

}  // namespace gpubudget::probe
