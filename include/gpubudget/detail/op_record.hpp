// gpubudget/detail/op_record.hpp — typed op descriptions <-> flat records, and the descriptor
// every leaf record points at.
//
// An op is a plain struct of named 8-byte fields (std::int64_t, enums over std::int64_t, `flag`)
// plus an `op_traits<Op>` specialization next to it:
//
//   struct linear_op { std::int64_t out_features = 0; flag bias = true; flag tied = false; };
//   template <> struct op_traits<linear_op> {
//     static constexpr const char* name = "linear";                       // or name(const Op&)
//     static constexpr value lower(layer_ctx&, const linear_op&, const value& x);  // required
//     static constexpr std::int64_t flops(const linear_op&, const shape& in, const shape& out);
//     static constexpr bool source = true;                                 // only `input`
//     static constexpr const char* part_name(const Op&, std::int32_t k, std::uint8_t& parts);
//     static constexpr std::int64_t weight_signature(const Op&);  // shared(id, ...) pairing
//   };
//
// `flops` defaults to one per output element; `source` to false; `part_name` (sub-modules a
// name may select, layer.hpp) to none. A record carries the op's
// fields as words (std::bit_cast both ways: a single step of constant evaluation, where a
// field-by-field reflection through Boost.Hana's struct accessors cost ~190 Clang steps per op
// visit, +60 % on a chain of ReLUs; benchmarks/compile_time/README.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include <array>
#include <bit>

#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// A yes/no field of an op description, 8 bytes wide like every other field (so that a record
/// can carry any op's fields as plain words).
struct flag {
  std::int64_t value = 0;
  constexpr flag() = default;
  constexpr flag(bool b) : value(b ? 1 : 0) {}  // NOLINT: implicit, so ops read like bools
  constexpr operator bool() const { return value != 0; }
};

/// Everything known about op `Op`; specialized next to each op (see this header's comment).
template <class Op>
struct op_traits;

/// Is `Op` an op description (it has traits)?
template <class Op>
concept op_description = requires { sizeof(op_traits<std::remove_cvref_t<Op>>); };

namespace detail {

/// Words of op `Op` in a record (an op without fields has none).
template <class Op>
inline constexpr std::size_t op_words = std::is_empty_v<Op> ? 0 : sizeof(Op) / sizeof(std::int64_t);

template <class Op>
constexpr void check_op_layout() {
  static_assert(std::is_trivially_copyable_v<Op>, "an op description must be trivially copyable");
  static_assert(std::is_empty_v<Op> || (sizeof(Op) % sizeof(std::int64_t) == 0 && std::has_unique_object_representations_v<Op>),
                "an op's fields must all be 8 bytes wide (std::int64_t, an enum over std::int64_t, gpubudget::flag)");
  static_assert(op_words<Op> <= max_op_fields, "an op has more fields than a record holds (max_op_fields)");
}

/// Writes `op`'s fields into record `l`, in declaration order.
template <class Op>
constexpr void pack_fields(const Op& op, layer& l) {
  check_op_layout<Op>();
  if constexpr (op_words<Op> > 0) {
    const auto words = std::bit_cast<std::array<std::int64_t, op_words<Op>>>(op);
    for (std::size_t i = 0; i < op_words<Op>; ++i) l.fields[i] = words[i];
  }
}

/// The first sizeof...(I) words of record `L` as `Op` (one expression: a loop over
/// std::array's operator[] cost Clang ~8 steps a word, and every op visit unpacks).
template <class Op, std::size_t... I>
constexpr Op unpack_words(const layer& L, std::index_sequence<I...>) {
  return std::bit_cast<Op>(std::array<std::int64_t, sizeof...(I)>{L.fields[I]...});
}

/// The op `Op` stored in record `L` (only `Op`'s own traits call this, through op_entry).
template <class Op>
constexpr Op unpack_fields(const layer& L) {
  if constexpr (op_words<Op> == 0) return Op{};
  else return unpack_words<Op>(L, std::make_index_sequence<op_words<Op>>{});
}

/// One sub-module's name in an op_traits<Op>::part_name table, and the part indices (bits) the
/// op's lowering gives its weights.
struct named_part {
  const char* name;
  std::uint8_t parts;
};

/// part_name over a table: the k-th of `names` (nullptr past the last), its parts in `parts`.
template <std::size_t N>
constexpr const char* nth_part(const named_part (&names)[N], std::int32_t k, std::uint8_t& parts) {
  if (k < 0 || static_cast<std::size_t>(k) >= N) return nullptr;
  parts = names[k].parts;
  return names[k].name;
}

/// The k-th item of the comma-separated `list` (empty past the last).
constexpr std::string_view nth_listed(std::string_view list, std::int32_t k) {
  for (; k > 0; --k) {
    const auto comma = list.find(',');
    if (comma == std::string_view::npos) return {};
    list.remove_prefix(comma + 1);
  }
  return list.substr(0, list.find(','));
}

/// The descriptor of `Op`: its traits behind plain function pointers, so the walk, the planner
/// and the report dispatch through one table instead of a switch each.
template <class Op>
struct op_entry {
  using traits = op_traits<Op>;
  static constexpr const char* name(const layer& L) {
    if constexpr (requires(const Op& o) { traits::name(o); }) return traits::name(unpack_fields<Op>(L));
    else return traits::name;
  }
  static constexpr value lower(layer_ctx& c, const value& x) { return traits::lower(c, unpack_fields<Op>(c.L), x); }
  static constexpr std::int64_t flops(const layer& L, const shape& in, const shape& out) {
    if constexpr (requires(const Op& o) { traits::flops(o, in, out); }) return traits::flops(unpack_fields<Op>(L), in, out);
    else return out.numel();
  }
  static constexpr std::string_view part_name(const layer& L, std::int32_t k, std::uint8_t& parts) {
    if constexpr (requires(const Op& o) { traits::part_name(o, k, parts); }) {
      const char* own = traits::part_name(unpack_fields<Op>(L), k, parts);
      if (own == nullptr) return {};
      return L.part_names ? nth_listed(L.part_names, k) : std::string_view(own);
    } else {
      return {};
    }
  }
  static constexpr std::int64_t weight_signature(const layer& L) {
    if constexpr (requires(const Op& o) { traits::weight_signature(o); }) return traits::weight_signature(unpack_fields<Op>(L));
    else return 0;
  }
  static constexpr bool is_source() {
    if constexpr (requires { traits::source; }) return traits::source;
    else return false;
  }
  static constexpr op_descriptor descriptor{&name, &lower, &flops, &part_name, &weight_signature, is_source()};
};

}  // namespace detail

/// The record of an op description: `as_layer(linear_op{.out_features = 10, .bias = true})`.
/// Composition functions (sequential, residual, ...) accept op descriptions directly too.
template <op_description Op>
constexpr layer as_layer(const Op& op) {
  layer l{};
  l.op = &detail::op_entry<Op>::descriptor;
  detail::pack_fields(op, l);
  return l;
}

/// Forward FLOPs per sample of leaf record `l` for input shape `in` and output shape `out`
/// (0 for composites: the planner sums their children).
constexpr std::int64_t forward_flops(const layer& l, const shape& in, const shape& out) {
  return l.kind == node_kind::leaf && l.op ? l.op->flops(l, in, out) : 0;
}

/// The op description stored in a leaf record, if it is an `Op` (checked).
template <op_description Op>
constexpr Op op_of(const layer& l) {
  if (l.op != &detail::op_entry<Op>::descriptor) detail::fail("gpubudget: op_of<Op>: the record holds another op");
  return detail::unpack_fields<Op>(l);
}

}  // namespace gpubudget
