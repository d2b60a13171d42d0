// gpubudget/layers/padding.hpp — F.pad and the padding modules (nn.ZeroPad2d, nn.ConstantPad1d/2d,
// nn.ReflectionPad1d/2d, nn.ReplicationPad1d/2d) on [C, L] and [C, H, W].
//
// What autograd keeps (derivatives.yaml; measured on the 2.6 CPU with saved_tensors_hooks,
// x[2,16,8,8]): constant_pad_nd nothing (its backward pads the gradient back by the negated
// amounts, a new tensor of x's size); reflection_pad2d and replication_pad2d their input (their
// backward starts from zeros of x's size). CPU autocast runs reflection and replication pads in
// fp32 (autocast_mode.cpp's CPU fp32 list; measured: a bf16 x makes an fp32 output and keeps the
// fp32 copy); CUDA autocast lists no pad, and a constant pad keeps its input's type everywhere.
#pragma once
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>

namespace gpubudget {

enum class pad_mode : std::int64_t { constant, reflect, replicate };

/// Pads the last dimension by `left`, `right` and, on [C, H, W], the one before by `top`,
/// `bottom` (F.pad's order: (left, right, top, bottom)).
struct pad_op {
  std::int64_t left = {};
  std::int64_t right = {};
  std::int64_t top = {};
  std::int64_t bottom = {};
  pad_mode mode = {};
  constexpr shape output_shape(const shape& in) const {
    // F.pad by zeros copies a tensor of any rank (Video Swin's PatchEmbed3d on a clip that needs none)
    if (mode == pad_mode::constant && left == 0 && right == 0 && top == 0 && bottom == 0 && in.rank >= 1) return in;
    if (in.rank != 2 && in.rank != 3) detail::tensor_rank_unsupported();
    if (left < 0 || right < 0 || top < 0 || bottom < 0) detail::invalid_layer_argument();
    if (in.rank == 2 && (top != 0 || bottom != 0)) detail::tensor_rank_unsupported();
    const int w = in.rank - 1, h = in.rank - 2;
    if (mode == pad_mode::reflect) {
      const auto widest = left > right ? left : right, tallest = top > bottom ? top : bottom;
      if (widest >= in[w]) detail::require_input(false, detail::reflection_pad_not_below_input, widest, in);
      if (in.rank == 3 && tallest >= in[h]) detail::require_input(false, detail::reflection_pad_not_below_input, tallest, in);
    }
    shape out = in;
    out[w] += left + right;
    if (in.rank == 3) out[h] += top + bottom;
    return out;
  }
};

template <>
struct op_traits<pad_op> {
  static constexpr const char* name(const pad_op& op) {
    return op.mode == pad_mode::reflect ? "reflection_pad" : op.mode == pad_mode::replicate ? "replication_pad" : "constant_pad";
  }
  static constexpr detail::value lower(detail::layer_ctx& c, const pad_op& op, const detail::value& x) {
    const shape out = op.output_shape(x.s);
    if (op.mode == pad_mode::constant) return detail::pointwise(c.s, x, out, x.type, detail::keeps::nothing);
    detail::value xin = detail::cast_to(c.s, x, c.s.types.cpu_fp32_op(x.type));
    detail::value y = detail::pointwise(c.s, xin, out, xin.type, detail::keeps::input);
    c.s.release(xin);
    return y;
  }
};

/// F.pad(x, (left, right, top, bottom), mode): pad(1, 1, 1, 1) is nn.ZeroPad2d(1);
/// pad(3, 3, 3, 3, pad_mode::reflect) nn.ReflectionPad2d(3); pad(2, 2, 0, 0, pad_mode::replicate)
/// nn.ReplicationPad1d(2) on [C, L]. The fill value of a constant pad does not change the memory.
constexpr layer pad(std::int64_t left, std::int64_t right, std::int64_t top, std::int64_t bottom, pad_mode mode = pad_mode::constant) {
  return as_layer(pad_op{left, right, top, bottom, mode});
}

}  // namespace gpubudget
