// gpubudget/detail/layer_input.hpp — a layer that cannot apply to the input it got names
// itself and the shape (issue C #13): a kernel or window larger than the padded map, a pooling
// that shrinks a map to nothing, a patch larger than the image, an embedding fed a float image.
//
// Each diagnostic is a non-constexpr function named after the layer and the problem, as in
// diagnostics.hpp, taking the layer's size and the per-sample shape it got. Layers call it
// through require_input(), a constexpr function: in a constant expression both compilers print
// the diagnostic's name and, in the call trace, require_input's arguments (the size and the
// shape). At run time the message spells them out: std::invalid_argument, as every diagnostic.
#pragma once
#include <cstdint>
#include <string>

#include <gpubudget/base/diagnostics.hpp>
#include <gpubudget/shape.hpp>

namespace gpubudget::detail {

/// "gpubudget: <problem> (<size_name> <size>, input <shape>)".
[[noreturn]] inline void fail_on_input(const char* problem, const char* size_name, std::int64_t size, const shape& got) {
  fail((std::string("gpubudget: ") + problem + " (" + size_name + " " + std::to_string(size) + ", input " + to_string(got) + ")").c_str());
}

[[noreturn]] inline void conv_kernel_larger_than_padded_input(std::int64_t kernel_extent, const shape& padded) {
  fail_on_input("convolution kernel larger than its padded input", "kernel (dilated)", kernel_extent, padded);
}
[[noreturn]] inline void pooling_window_larger_than_padded_input(std::int64_t window, const shape& padded) {
  fail_on_input("pooling window larger than its padded input: the map would shrink to nothing", "window", window, padded);
}
[[noreturn]] inline void unfold_kernel_larger_than_padded_input(std::int64_t kernel, const shape& padded) {
  fail_on_input("unfold kernel larger than its padded input", "kernel", kernel, padded);
}
[[noreturn]] inline void patch_larger_than_image(std::int64_t patch, const shape& image) {
  fail_on_input("patch embedding's patch larger than the image", "patch", patch, image);
}
/// torchvision's VisionTransformer asserts image_size % patch_size == 0 ("Input shape indivisible
/// by patch size!", vision_transformer.py): its positions are sized for whole patches.
[[noreturn]] inline void image_not_divisible_by_patch(std::int64_t patch, const shape& image) {
  fail_on_input("patch embedding's image is not a whole number of patches (torchvision's ViT refuses it)", "patch", patch, image);
}
[[noreturn]] inline void embedding_needs_token_ids(std::int64_t num_embeddings, const shape& got) {
  fail_on_input("embedding needs token ids (tokens(n)), not a float tensor", "num_embeddings", num_embeddings, got);
}
/// ConvTranspose's output_padding must be smaller than its stride or its dilation (PyTorch:
/// "output padding must be smaller than either stride or dilation", torch/nn/modules/conv.py
/// _ConvTransposeNd and ATen's slow_conv_transpose shape check).
[[noreturn]] inline void conv_transpose_output_padding_not_below_stride_or_dilation(std::int64_t output_padding, const shape& got) {
  fail_on_input("conv_transpose output_padding must be smaller than its stride or its dilation", "output_padding", output_padding, got);
}
/// Pooling padding may be at most half the kernel (PyTorch's pool2d_shape_check: "pad should be
/// at most half of effective kernel size"; avg_pool2d: "pad should be at most half of kernel size").
[[noreturn]] inline void pooling_padding_over_half_the_kernel(std::int64_t padding, const shape& got) {
  fail_on_input("pooling padding over half the kernel (PyTorch refuses it: pad <= kernel / 2)", "padding", padding, got);
}

/// nn.LayerNorm(normalized_shape) must name the input's trailing dimensions.
[[noreturn]] inline void layer_norm_over_more_dims_than_the_input_has(std::int64_t dims, const shape& got) {
  fail_on_input("layer_norm over more trailing dimensions than the per-sample input has", "dimensions", dims, got);
}
/// F.pad(mode="reflect") needs each pad below the dimension it pads (ATen ReflectionPad.cpp:
/// "Padding size should be less than the corresponding input dimension").
[[noreturn]] inline void reflection_pad_not_below_input(std::int64_t pad, const shape& got) {
  fail_on_input("reflection padding must be smaller than the dimension it pads (PyTorch refuses it)", "padding", pad, got);
}
/// F.glu halves its dimension (ATen GatedLinearUnit.cpp: "Halving dimension must be even").
[[noreturn]] inline void glu_dimension_not_even(std::int64_t dim, const shape& got) {
  fail_on_input("glu halves a dimension whose size is odd (PyTorch: Halving dimension must be even)", "dim", dim, got);
}
/// A per-sample dimension index past the input's rank (normalize, glu).
[[noreturn]] inline void dimension_not_in_input(std::int64_t dim, const shape& got) {
  fail_on_input("dimension index not in the per-sample input", "dim", dim, got);
}

using layer_input_diagnostic = void (*)(std::int64_t, const shape&);

/// Calls `diagnostic` with the size and the shape of rank `rank`, dimensions `d0`..`d3`: numbers
/// as arguments, which Clang prints in its trace ("in call to 'stop_at_input(&..., 7, 3, 3, 4,
/// 4, 0)'": size 7, rank 3, [3, 4, 4]).
constexpr void stop_at_input(layer_input_diagnostic diagnostic, std::int64_t size, int rank, std::int64_t d0, std::int64_t d1, std::int64_t d2,
                             std::int64_t d3) {
  diagnostic(size, shape{{d0, d1, d2, d3}, rank});
}

/// Stops at `diagnostic(size, got)` unless `ok`.
constexpr void require_input(bool ok, layer_input_diagnostic diagnostic, std::int64_t size, const shape& got) {
  if (!ok) stop_at_input(diagnostic, size, got.rank, got[0], got[1], got[2], got[3]);
}

/// Stops at dimension_not_in_input unless `dim` is one of `got`'s per-sample dimensions.
constexpr void require_dimension(std::int64_t dim, const shape& got) { require_input(dim >= 0 && dim < got.rank, dimension_not_in_input, dim, got); }

/// `in` with `padding` added on both sides of every dimension but the first (channels).
constexpr shape padded(shape in, std::int64_t padding) {
  for (int d = 1; d < in.rank; ++d) in[d] += 2 * padding;
  return in;
}

/// A window of `window` elements fits every spatial dimension of `padded_in`.
constexpr bool window_fits(std::int64_t window, const shape& padded_in) {
  bool fits = true;
  for (int d = 1; d < padded_in.rank; ++d) fits = fits && padded_in[d] >= window;
  return fits;
}

}  // namespace gpubudget::detail
