// gpubudget/detail/module_names.hpp — PyTorch module paths of a model's records, and which
// records a name such as `layer4.2.conv3` selects.
//
// A record's `name` is its path relative to the nearest named record above it, as nn.Module
// names its children: named("layer4", sequential(named("0", block), repeat(2, block))) gives
// `layer4.0`, and the repeat's copies are `layer4.1`, `layer4.2` (numbered_from(), graph.hpp).
// The copies of a repeat are stored once, so a name that picks one copy is resolved into a
// *condition* on the repetition ("record 17, while repeat 12 runs its copy 1"), which the walk
// tests as it runs the copies; nothing is expanded per copy.
//
// Below a named leaf, a name may go on into the sub-modules its op names (op_descriptor::
// part_name: attention's `self_attn.q_proj`); it then selects "record R, parts mask M". A name
// that reaches such a leaf but spells none of its parts is an unknown part (an error of its own).
//
// A name matches where it spells a run of path components starting at a component of some
// record's name (PEFT's target_modules rule, so `conv3` names every conv3, `layers.31` Llama's
// `model.layers.31` and `stage3` a block nested under another name); its last component may be a prefix of a name ("he" selects
// "head"), but a copy number must be whole (`layer3.2` is not `layer3.20`).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gpubudget/base/dyn_array.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget::detail {

/// "While repeat record `repeat` runs its copy `repetition` (0-based)".
struct repetition_condition {
  std::int32_t repeat = -1;
  std::int64_t repetition = 0;
};

/// Every part of a record (a match of the record itself, not of some of its op's sub-modules).
inline constexpr std::uint8_t all_parts = 0xFF;

/// Record `record` (and everything under it; of a leaf, the weights of `parts` only) is selected
/// when all its conditions hold.
struct module_match {
  std::int32_t record = -1;
  std::int32_t conditions_begin = 0, conditions_count = 0;
  std::uint8_t parts = all_parts;
};

/// What a name selects: some modules, nothing, or nothing because it names a sub-module an op
/// does not have (`self_attn.x_proj`).
enum class name_selects : std::uint8_t { modules, nothing, unknown_part };

/// Every match of a list of names, and the conditions they carry.
struct module_selection {
  dyn_array<module_match> matches{};
  dyn_array<repetition_condition> conditions{};
};

/// Copy number of the first copy of repeat `L` (numbered_from(): the copies continue a numbering).
constexpr std::int64_t first_copy_number(const layer& L) { return L.fields[0]; }

/// Modules each copy of repeat `L` holds in PyTorch's numbering (numbered_from(); 1: the copy is
/// one module).
constexpr std::int64_t modules_per_copy(const layer& L) { return L.fields[1] > 1 ? L.fields[1] : 1; }

/// A repeat named like "encoder_layer_" numbers its copies in the last component
/// ("encoder_layer_0", torchvision ViT's OrderedDict keys) instead of below it.
constexpr bool numbers_in_its_name(const layer& L) {
  if (L.kind != node_kind::repeat || !L.name || !*L.name) return false;
  const char* e = L.name;
  while (e[1]) ++e;
  return *e == '_';
}

/// Matches the names below one record against a pattern, collecting what matches.
struct module_matcher {
  const layer* records;
  std::int32_t count;
  const char* end;  ///< end of the pattern being matched
  module_selection& out;
  dyn_array<repetition_condition> pinned{};  ///< conditions on the way down
  bool found = false;
  bool unknown_part = false;  ///< a name went on below a leaf into a part its op does not name

  constexpr void add_match(std::int32_t record, std::uint8_t parts = all_parts) {
    out.matches.push_back({record, static_cast<std::int32_t>(out.conditions.size()), static_cast<std::int32_t>(pinned.size()), parts});
    for (const auto& c : pinned) out.conditions.push_back(c);
    found = true;
  }

  /// Pattern at `p` against record `c` (its name from `n` on: a component of it).
  constexpr void match_at(std::int32_t c, const char* p) { return records[c].name ? match_name(c, records[c].name, p) : match_unnamed(c, p); }
  constexpr void match_name(std::int32_t c, const char* n, const char* p) {
    const layer& L = records[c];
    while (p != end && *n && *p == *n) ++p, ++n;
    if (p == end) return add_match(c);           // the pattern ends in (or at the end of) the name
    if (*n) return;                              // differs inside the name
    if (numbers_in_its_name(L)) return match_copy_number(c, p);
    if (*p != '.') return;                       // "layer41" is not "layer4"
    if (L.kind == node_kind::leaf) return match_parts(c, p + 1, true);
    match_unnamed(c, p + 1);
  }

  /// Pattern at `p` against the sub-modules leaf `c`'s op names (attention's q_proj): every part
  /// name it spells or begins (the same prefix rule as for records). `below_name`: the pattern
  /// went on below the leaf's name, so a leaf whose op names parts but none of these is an
  /// unknown part.
  constexpr void match_parts(std::int32_t c, const char* p, bool below_name) {
    const layer& L = records[c];
    std::uint8_t selected = 0, parts = 0;
    std::int32_t k = 0;
    for (std::string_view n; L.op && !(n = L.op->part_name(L, k, parts)).empty(); ++k)
      if (begins(p, n)) selected = static_cast<std::uint8_t>(selected | parts);
    if (selected) add_match(c, selected);
    else if (below_name && k > 0) unknown_part = true;
  }
  /// Does the pattern at `p` spell `name` or its beginning?
  constexpr bool begins(const char* p, std::string_view name) const {
    std::size_t k = 0;
    while (p != end && k < name.size() && *p == name[k]) ++p, ++k;
    return p == end;
  }

  /// Pattern at `p` against what lies below record `c` (its name, if any, is consumed).
  constexpr void match_unnamed(std::int32_t c, const char* p) {
    const layer& L = records[c];
    if (L.kind == node_kind::repeat) return match_copy_number(c, p);
    if (L.kind != node_kind::leaf) match_children(c, p);
  }

  constexpr void match_children(std::int32_t c, const char* p) {
    for (std::int32_t k = c + 1; k < c + records[c].span; k += records[k].span) match_at(k, p);
  }

  /// Pattern at `p` starts with a module number under repeat `c`: a whole number in its range,
  /// which names a copy or, with several modules per copy, one part of a copy.
  constexpr void match_copy_number(std::int32_t c, const char* p) {
    const layer& R = records[c];
    const std::int64_t first = first_copy_number(R), per_copy = modules_per_copy(R), limit = first + R.count * per_copy;
    std::int64_t number = 0;
    const char* q = p;
    for (; q != end && *q >= '0' && *q <= '9' && number < limit; ++q) number = number * 10 + (*q - '0');
    if (q == p || (q != end && *q != '.') || (*p == '0' && q - p > 1)) return;  // "01" is no module number
    if (number < first || number >= limit) return;
    pinned.push_back({c, (number - first) / per_copy});
    const std::int32_t module = per_copy == 1 ? c : part_of_copy(c, (number - first) % per_copy);
    if (q == end) add_match(module);
    else if (per_copy == 1) match_children(c, q + 1);
    else match_unnamed(module, q + 1);
    pinned.resize(pinned.size() - 1);
  }

  /// The `k`-th part of the one block repeat `c` repeats.
  constexpr std::int32_t part_of_copy(std::int32_t c, std::int64_t k) {
    std::int32_t part = c + 2;
    for (; k > 0; --k) part += records[part].span;
    return part;
  }
};

/// Adds to `out` every record (or part of a leaf's op) the name [begin, end) selects; an empty
/// name selects nothing.
constexpr name_selects select_modules(const layer* records, std::int32_t count, const char* begin, const char* end, module_selection& out) {
  if (begin == end) return name_selects::nothing;
  module_matcher m{records, count, end, out};
  for (std::int32_t i = 0; i < count; ++i) {
    for (const char* n = records[i].name; n && *n; ++n)
      if (n == records[i].name || n[-1] == '.') m.match_name(i, n, begin);  // from each component of the name
    if (records[i].kind == node_kind::leaf) m.match_parts(i, begin, false);   // `q_proj`: every q_proj
  }
  return m.found ? name_selects::modules : m.unknown_part ? name_selects::unknown_part : name_selects::nothing;
}

/// Calls `on_item(begin, end)` for every comma-separated item of `list`.
template <class F>
constexpr void for_each_list_item(const char* list, F on_item) {
  for (const char* p = list;; ++p) {
    const char* e = p;
    while (*e && *e != ',') ++e;
    on_item(p, e);
    if (!*e) return;
    p = e;
  }
}

// --- run time: the paths, for tables and messages ---------------------------------------------

/// The part names of the ops of the leaves that `name` less its last component selects
/// ("q_proj, k_proj, v_proj, o_proj" for `model.layers.31.self_attn.x_proj`), for a message;
/// "" when that selects no leaf whose op names parts.
inline std::string part_names_below(const layer* records, std::int32_t count, std::string_view name) {
  const auto dot = name.rfind('.');
  module_selection leaves{};
  if (dot == std::string_view::npos || select_modules(records, count, name.data(), name.data() + dot, leaves) != name_selects::modules) return "";
  for (const auto& m : leaves.matches) {
    const layer& L = records[m.record];
    std::string list;
    std::uint8_t parts = 0;
    std::int32_t k = 0;
    for (std::string_view n; L.op && !(n = L.op->part_name(L, k, parts)).empty(); ++k) list += (k ? ", " : "") + std::string(n);
    if (!list.empty()) return list;
  }
  return "";
}

/// `path.name`, or whichever of them is not empty.
inline std::string join_path(const std::string& path, const std::string& name) {
  return path.empty() ? name : name.empty() ? path : path + "." + name;
}

/// Below record `i` at `path`: the path its copies' parts live under (a repeat's copies as a
/// range, `layer4.{1..2}`, `encoder.layers.encoder_layer_{0..11}`), or `path` for other records.
inline std::string copies_path(const layer& L, const std::string& path) {
  if (L.kind != node_kind::repeat) return path;
  const auto first = first_copy_number(L), last = first + L.count * modules_per_copy(L) - 1;
  const std::string numbers = first == last ? std::to_string(first) : "{" + std::to_string(first) + ".." + std::to_string(last) + "}";
  return numbers_in_its_name(L) ? path + numbers : join_path(path, numbers);
}

/// Every module path of the subtree at `i` below `path`, in order (copies as ranges; a named
/// leaf's op parts after it: `self_attn.q_proj`).
inline void list_module_paths(const layer* records, std::int32_t i, const std::string& path, std::vector<std::string>& out) {
  const layer& L = records[i];
  const std::string own = L.name ? join_path(path, L.name) : path;
  if (L.name) out.push_back(own);
  std::uint8_t parts = 0;
  std::int32_t k = 0;
  for (std::string_view n; L.name && L.op && !(n = L.op->part_name(L, k, parts)).empty(); ++k) out.push_back(own + "." + std::string(n));
  const std::string below = copies_path(L, own);
  if (below != own) out.push_back(below);
  for (std::int32_t c = i + 1; c < i + L.span; c += records[c].span) list_module_paths(records, c, below, out);
}

/// The module path of record `target` (copies of repeats as ranges); "" for an unnamed one at
/// the top.
inline std::string module_path_of(const layer* records, std::int32_t target) {
  std::string path;
  for (std::int32_t i = 0; i != target;) {  // descend from the root towards `target`
    const layer& L = records[i];
    if (L.name) path = join_path(path, L.name);
    path = copies_path(L, path);
    std::int32_t c = i + 1;
    while (c + records[c].span <= target) c += records[c].span;
    i = c;
  }
  return records[target].name ? join_path(path, records[target].name) : path;
}

}  // namespace gpubudget::detail
