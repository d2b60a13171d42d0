// gpubudget/detail/op_record.hpp — typed op descriptions <-> flat records, and the descriptor
// every leaf record points at.
//
// An op is a struct with named fields declared through BOOST_HANA_DEFINE_STRUCT (Hana's struct
// reflection is what lets one generic function pack any op's fields into a record and unpack
// them, in declaration order, without a hand-written slot map per op), plus an `op_traits<Op>`
// specialization next to it:
//
//   template <> struct op_traits<linear_op> {
//     static constexpr const char* name = "linear";                       // or name(const Op&)
//     static constexpr value lower(layer_ctx&, const linear_op&, const value& x);  // required
//     static constexpr std::int64_t flops(const linear_op&, const shape& in, const shape& out);
//     static constexpr bool source = true;                                 // only `input`
//   };
//
// `flops` defaults to one per output element; `source` to false.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>

#include <gpubudget/detail/ops.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget {

/// Everything known about op `Op`; specialized next to each op (see this header's comment).
template <class Op>
struct op_traits;

/// Is `Op` an op description (it has traits)?
template <class Op>
concept op_description = requires { sizeof(op_traits<std::remove_cvref_t<Op>>); };

namespace detail {

template <class T>
inline constexpr bool is_flag = std::is_same_v<std::remove_cvref_t<T>, bool>;

/// Writes `op`'s fields into record `l`: non-bool fields into `fields` in declaration order,
/// bool fields into `field_flags`, one bit each in declaration order.
template <class Op>
constexpr void pack_fields(const Op& op, layer& l) {
  if constexpr (boost::hana::Struct<Op>::value) {
    std::size_t i = 0;
    std::uint32_t bit = 1;
    boost::hana::for_each(boost::hana::accessors<Op>(), [&](auto accessor) {
      const auto& field = boost::hana::second(accessor)(op);
      if constexpr (is_flag<decltype(field)>) {
        if (field) l.field_flags |= bit;
        bit <<= 1;
      } else {
        if (i == max_op_fields) fail("gpubudget: internal: an op has more non-bool fields than a record holds");
        l.fields[i++] = static_cast<std::int64_t>(field);
      }
    });
  }
}

/// The op `Op` stored in record `L` (only `Op`'s own traits call this, through op_entry).
template <class Op>
constexpr Op unpack_fields(const layer& L) {
  Op op{};
  if constexpr (boost::hana::Struct<Op>::value) {
    std::size_t i = 0;
    std::uint32_t bit = 1;
    boost::hana::for_each(boost::hana::accessors<Op>(), [&](auto accessor) {
      auto& field = boost::hana::second(accessor)(op);
      if constexpr (is_flag<decltype(field)>) {
        field = (L.field_flags & bit) != 0;
        bit <<= 1;
      } else {
        field = static_cast<std::remove_reference_t<decltype(field)>>(L.fields[i++]);
      }
    });
  }
  return op;
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
  static constexpr bool is_source() {
    if constexpr (requires { traits::source; }) return traits::source;
    else return false;
  }
  static constexpr op_descriptor descriptor{&name, &lower, &flops, is_source()};
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
