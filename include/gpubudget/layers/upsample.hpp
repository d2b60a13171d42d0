// gpubudget/layers/upsample.hpp — F.interpolate / nn.Upsample by whole factors (2-D and 3-D): the
// decoder half of a U-Net, an FPN's top-down path, a segmentation head.
//
// What autograd keeps, measured (benchmarks/accuracy/op_rules.md U1): nothing. The backward
// formulas of upsample_nearest2d and upsample_bilinear2d read only the input's sizes
// (derivatives.yaml), and PyTorch 2.6 on the CPU saves no tensor for either, fp32 or under CPU
// autocast bf16. Neither op is on an autocast cast list (CUDA autocast_mode.cpp: not in its
// fp32 list), so it runs in its input's dtype. The backward allocates the input's gradient and
// nothing else (CUDA UpSampleBilinear2d.cu: grad_input zeroed, then atomicAdd; no workspace).
// The 3-D ones (upsample_nearest3d, upsample_trilinear3d) likewise (measured on the 2.6 CPU,
// x[2,8,4,8,8] fp32 and bf16 under CPU autocast: nothing saved, the input's dtype).
#pragma once
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// How the new pixels are filled: F.interpolate's mode="nearest" or "bilinear" (align_corners
/// either way: it changes the values, not the memory).
enum class upsample_mode : std::int64_t { nearest = 0, bilinear = 1, trilinear = 2 };

/// F.interpolate(x, scale_factor=(scale_h, scale_w), mode) on [C, H, W] -> [C, H·scale_h, W·scale_w];
/// with scale_d > 0, (scale_d, scale_h, scale_w) on [C, D, H, W] (nearest or trilinear); with
/// size_h > 0, F.interpolate(x, size=(size_h, size_w)) on [C, H, W] (resize).
struct upsample_op {
  std::int64_t scale_h = {};
  std::int64_t scale_w = {};
  upsample_mode mode = {};
  std::int64_t scale_d = {};
  std::int64_t size_h = {};
  std::int64_t size_w = {};
  constexpr shape output_shape(const shape& in) const {
    if (size_h > 0) {
      if (in.rank != 3 || mode == upsample_mode::trilinear) detail::tensor_rank_unsupported();
      return make_shape(in[0], size_h, size_w);
    }
    const bool three_d = scale_d > 0;
    // PyTorch's modes fit their ranks: bilinear a 4-D tensor, trilinear a 5-D one
    if (in.rank != (three_d ? 4 : 3) || (mode == upsample_mode::bilinear && three_d) || (mode == upsample_mode::trilinear && !three_d))
      detail::tensor_rank_unsupported();
    if (scale_h <= 0 || scale_w <= 0 || scale_d < 0) detail::upsample_scale_must_be_positive();
    if (three_d) return make_shape(in[0], checked_mul(in[1], scale_d), checked_mul(in[2], scale_h), checked_mul(in[3], scale_w));
    return make_shape(in[0], checked_mul(in[1], scale_h), checked_mul(in[2], scale_w));
  }
};

template <>
struct op_traits<upsample_op> {
  static constexpr const char* name(const upsample_op& op) {
    return op.mode == upsample_mode::bilinear ? "upsample_bilinear" : op.mode == upsample_mode::trilinear ? "upsample_trilinear" : "upsample_nearest";
  }
  static constexpr detail::value lower(detail::layer_ctx& c, const upsample_op& op, const detail::value& x) {
    return detail::pointwise(c.s, x, op.output_shape(x.s), x.type, detail::keeps::nothing);
  }
  /// A multiply-add per source pixel read: bilinear reads 4 per output element, nearest copies.
  static constexpr std::int64_t flops(const upsample_op& op, const shape&, const shape& out) {
    return op.mode == upsample_mode::bilinear ? 2 * 4 * out.numel() : op.mode == upsample_mode::trilinear ? 2 * 8 * out.numel() : 0;
  }
};

/// nn.Upsample(scale_factor=scale, mode=...) on [C, H, W].
constexpr layer upsample(std::int64_t scale, upsample_mode mode = upsample_mode::nearest) {
  return as_layer(upsample_op{scale, scale, mode});
}
/// The same with a factor per dimension: F.interpolate(x, scale_factor=(scale_h, scale_w)).
constexpr layer upsample(std::int64_t scale_h, std::int64_t scale_w, upsample_mode mode) {
  return as_layer(upsample_op{scale_h, scale_w, mode});
}

/// F.interpolate(x, size=(h, w), mode="nearest" or "bilinear") on [C, H, W] -> [C, h, w], any sizes
/// (a U-Net's up step resized to its skip's odd size): the same kernels as upsample, nothing kept.
constexpr layer resize(std::int64_t h, std::int64_t w, upsample_mode mode = upsample_mode::nearest) {
  if (h <= 0 || w <= 0) detail::output_size_not_positive();
  return as_layer(upsample_op{1, 1, mode, 0, h, w});
}

/// nn.Upsample(scale_factor=(scale_d, scale_h, scale_w), mode="nearest" or "trilinear") on [C, D, H, W]
/// (a 3-D U-Net's decoder).
constexpr layer upsample3d(std::int64_t scale_d, std::int64_t scale_h, std::int64_t scale_w, upsample_mode mode = upsample_mode::nearest) {
  if (scale_d <= 0) detail::upsample_scale_must_be_positive();  // 0 marks the 2-D op
  return as_layer(upsample_op{scale_h, scale_w, mode, scale_d});
}

/// nn.PixelShuffle(r) on [C·r², H, W] -> [C, H·r, W·r]: a new tensor (2.6 CPU's pixel_shuffle kernel;
/// CUDA: reshape, permute, reshape, whose last reshape copies). Its backward (pixel_unshuffle of the
/// gradient) reads sizes only: nothing kept (measured, 1.13 and 2.6: PixelShuffleBackward0 saves
/// nothing; op_rules.md U2).
struct pixel_shuffle_op {
  std::int64_t factor = {};
  constexpr shape output_shape(const shape& in) const {
    if (in.rank != 3) detail::tensor_rank_unsupported();
    if (factor < 1 || in[0] % (factor * factor) != 0) detail::pixel_shuffle_factor_must_divide_channels();
    return make_shape(in[0] / (factor * factor), checked_mul(in[1], factor), checked_mul(in[2], factor));
  }
};

template <>
struct op_traits<pixel_shuffle_op> {
  static constexpr const char* name = "pixel_shuffle";
  static constexpr detail::value lower(detail::layer_ctx& c, const pixel_shuffle_op& op, const detail::value& x) {
    return detail::pointwise(c.s, x, op.output_shape(x.s), x.type, detail::keeps::nothing);
  }
};

/// nn.PixelShuffle(factor) on [C·factor², H, W] (sub-pixel convolution's upsampling).
constexpr layer pixel_shuffle(std::int64_t factor) { return as_layer(pixel_shuffle_op{factor}); }

}  // namespace gpubudget
