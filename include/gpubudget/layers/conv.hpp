// gpubudget/layers/conv.hpp — convolutions (1-D/2-D/3-D, grouped, depthwise, transposed).
//
// Square kernels, one size for every spatial dimension, but a 2-D convolution's last dimension
// may take its own kernel and padding (kernel_w, padding_w: Inception's 1×7 and 7×1). The autograd
// node saves the input (and the weight, a parameter); backward allocates the input gradient and
// the weight/bias gradients.
#pragma once
#include <limits>
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// The convolution's input arrives channels-last-strided (as after a permute + residual add in
/// ConvNeXt blocks, or a conv1d's input made by [B, L, C].transpose(1, 2), as a text CNN's
/// embedding); CPU (oneDNN) transients depend on it, and on CUDA cuDNN then needs no layout copy.
struct channels_last_input_t {};
inline constexpr channels_last_input_t channels_last_input{};
/// torch.nn.utils.weight_norm(conv) (dim 0): the weight recomputed from g and v every forward by
/// a hook that keeps it on the module (weight_norm_of).
struct weight_norm_t {};
inline constexpr weight_norm_t weight_norm{};
/// torch.nn.utils.parametrizations.weight_norm(conv): the same weight, computed where the
/// convolution reads it and kept by nothing but its autograd node.
struct weight_norm_parametrization_t {};
inline constexpr weight_norm_parametrization_t weight_norm_parametrization{};

/// nn.Conv{1,2,3}d / nn.ConvTranspose2d. `out_channels` 0 keeps the input's channel count;
/// `groups` -1 means one group per input channel (depthwise).
struct conv_op {
  std::int64_t dims = {};
  std::int64_t out_channels = {};
  std::int64_t kernel = {};
  std::int64_t stride = {};
  std::int64_t padding = {};
  std::int64_t dilation = {};
  std::int64_t groups = {};
  std::int64_t output_padding = {};
  flag bias = {};
  flag transposed = {};
  flag channels_last = {};
  /// One spatial dimension's own kernel, padding and stride (the others share `kernel`, `padding`,
  /// `stride`): a 2-D convolution's W (kernel_w, padding_w: Inception's 1x7) or a 3-D one's T
  /// (kernel_t, padding_t, stride_t: torchvision's video ResNets, (3, 7, 7) stride (1, 2, 2)).
  /// Each value + 1 in 20 bits (kernel 0-19, padding 20-39, stride 40-59), 0 where not given;
  /// bit 60 marks W, bit 61 T. One word, as a layer record holds 12.
  std::int64_t own_dim = {};
  static constexpr std::int64_t own_w = std::int64_t{1} << 60, own_t = std::int64_t{1} << 61;
  /// Bit 62 of own_dim: weight_norm in either form, the sign bit: the hook's (no word of their
  /// own left in the record).
  static constexpr std::int64_t weight_normed_bit = std::int64_t{1} << 62, weight_norm_hook_bit = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t weight_norm_bits = weight_normed_bit | weight_norm_hook_bit;
  constexpr bool weight_normed() const { return (own_dim & weight_normed_bit) != 0; }
  constexpr bool weight_norm_hook() const { return (own_dim & weight_norm_hook_bit) != 0; }
  /// The spatial dimension (1-based, as in a shape) with values of its own; 0 for none.
  constexpr int own_index() const { return (own_dim & own_t) != 0 ? 1 : (own_dim & own_w) != 0 ? static_cast<int>(dims) : 0; }
  constexpr std::int64_t own_field(int d, int field, std::int64_t shared) const {
    const auto v = (own_dim >> (20 * field)) & 0xFFFFF;
    return d == own_index() && v != 0 ? v - 1 : shared;
  }
  /// The kernel, padding and stride along spatial dimension `d`.
  constexpr std::int64_t kernel_at(int d) const { return own_field(d, 0, kernel); }
  constexpr std::int64_t padding_at(int d) const { return own_field(d, 1, padding); }
  constexpr std::int64_t stride_at(int d) const { return own_field(d, 2, stride); }
  constexpr bool rectangular() const {
    const int d = own_index();
    return d != 0 && (kernel_at(d) != kernel || padding_at(d) != padding || stride_at(d) != stride);
  }
  /// The largest stride over the spatial dimensions (a convolution strided along any of them).
  constexpr std::int64_t widest_stride() const { const int d = own_index(); return d != 0 && stride_at(d) > stride ? stride_at(d) : stride; }
};

namespace detail {

struct conv_transients {
  std::int64_t forward = 0, backward = 0;
};

/// Transients of a CPU (oneDNN) convolution beyond its output, input gradient and weight
/// gradient: layout reorders and scratch, as measured in benchmarks/accuracy/op_rules.md §1b
/// (conv_scan.py: 23 shapes, PyTorch 1.13.1, 2 intra-op threads). One rule covers the ordinary
/// convolutions (3×3, 1×1, strided, downsampling; within ~0.3·X of every measurement):
/// forward max(X, Y) + W, backward max(X + Y, W). The first layer (no input gradient) holds
/// about one output; depthwise convs one input; and two measured outliers: a patchifying conv
/// with a weight larger than its output (ViT) keeps ≈4.4·W of scratch per thread, and a
/// depthwise conv fed a channels-last-strided input ≈258·W, 387·W when it runs in 16 bit
/// (`half`: CPU autocast bf16; op_rules.md 2.6 #36: the fp32 scratch and a bf16 copy of it,
/// 259·W vs 387·W at 768 channels, 260·W vs 393·W at 384). W: the weight's fp32 bytes. On CUDA
/// the equivalent is cuDNN's workspace, budgeted at the device level. A frozen weight (a LoRA
/// base, a frozen layer) asks only the input gradient: its backward holds max(X, Y) + W at
/// stride 1 and max(2·X, X + W) when strided (op_rules.md 2.6 #42: the 16 frozen convs of
/// ResNet-18 and grouped_net under LoRA, tests/export/trace_peak.py --rise; the rule above gave
/// ResNet-18's 3x3 128->128 at 28² X + Y, 13 % over, and its strided 1x1 downsamples W, 50 % under).
/// A transposed convolution's CPU transients. 2.6 (oneDNN 3.7's brgemm deconvolution on
/// channels-last copies; op_rules.md 2.6 #53, 14 shapes of ConvTranspose1d/2d/3d, 8-128 channels):
/// forward max(2X + Y, 2Y, Y + W), backward max(X + Y, W); 1.13: about 4.5·Y and 5·Y (§1b).
constexpr conv_transients cpu_conv_transpose_transients(std::int64_t X, std::int64_t Y, std::int64_t W, bool torch26) {
  if (!torch26) return {Y * 9 / 2, 5 * Y};
  const auto fwd = 2 * X + Y > 2 * Y ? 2 * X + Y : 2 * Y;
  return {fwd > Y + W ? fwd : Y + W, X + Y > W ? X + Y : W};
}

constexpr conv_transients cpu_conv_transients(const sim& s, std::int64_t X, std::int64_t Y, std::int64_t W, std::int64_t in_ch,
                                              std::int64_t grp, std::int64_t k, std::int64_t st, bool input_needs_grad,
                                              bool transposed, bool channels_last, bool half, bool weight_trains = true) {
  if (!s.on_cpu()) return {};
  // oneDNN's transposed conv holds its weight with the input channels padded to 16 (op_rules.md
  // 2.6 #58: DCGAN's 100-channel latent, 1.12·W)
  if (transposed) return cpu_conv_transpose_transients(X, Y, in_ch % 16 != 0 ? W / in_ch * ((in_ch + 15) / 16 * 16) : W, s.torch26_cpu());
  const bool depthwise_conv = grp == in_ch && grp > 1;
  if (depthwise_conv && channels_last) return {Y / 20, (half ? 387 : 258) * W};  // independent of H, B, threads
  if (depthwise_conv) return {Y, X};
  if (!input_needs_grad) {
    // the patchifying conv's per-thread scratch is fp32 oneDNN's; in bf16 its backward holds
    // only the gradients (op_rules.md 2.6 #37: ViT's patch conv at 96 px, 21,509K vs 3,668K)
    const bool patchify = k == st && k > 1 && W > Y && !half;
    const auto scratch = W * 44 / 10 * s.plan.cpu_threads;
    return {Y + (W < Y ? W : Y), patchify && scratch > Y ? scratch : Y};
  }
  const auto mx = X > Y ? X : Y;
  if (!weight_trains) return {mx + W, st > 1 ? (2 * X > X + W ? 2 * X : X + W) : mx + W};
  // 2.6's strided convolution holds two inputs' worth while its input gradient is computed, as the
  // frozen one above does (op_rules.md 2.6 #47: a 3x3/2 32->64 at 64², 2.03 MB where X + Y = 1.57)
  const auto ordinary = X + Y > W ? X + Y : W;
  return {mx + W, s.torch26_cpu() && st > 1 && 2 * X > ordinary ? 2 * X : ordinary};
}

/// 2.6 CPU (oneDNN 3.7, AVX-512), a dense fp32 3-D convolution: PyTorch hands oneDNN plain NCDHW
/// tensors and oneDNN computes in 16-channel blocks (ONEDNN_VERBOSE, op_rules.md 2.6 #52): the
/// output in a blocked buffer Yp (padded to a multiple of 16 channels) reordered into the plain
/// output afterwards, the input reordered to blocks (Xp) unless a kernel > 1 reads fewer than 16
/// channels in place. Forward: max(Xs + Yp - Y, Yp) beyond the output; backward (the input's
/// gradient computed blocked, then reordered): Yp + Xp, less X where the weight gradient runs on
/// plain tensors (fewer than 16 input channels, kernel > 1); a first layer (no input gradient) 2·Yp.
/// A temporal kernel deeper than its input (k_t > T: video ResNets' last stages on short clips)
/// gets oneDNN's gemm weight gradient (#51): 4·W per intra-op thread plus one im2col buffer per
/// thread (C_in·kernel volume·one sample's output positions). conv3d_probe.py's shapes: within 10 % at k_t <= T,
/// 0 to +17 % with the gemm term (8 shapes, 1, 2 and 4 threads).
struct conv3d_shape {
  std::int64_t X, Y, W, in_ch, out_ch, kvol, kernel_t, frames, out_positions;
};
constexpr conv_transients cpu_conv3d_transients(const conv3d_shape& c, bool input_needs_grad, std::int64_t threads) {
  const auto padded = [](std::int64_t bytes, std::int64_t ch) { return bytes / ch * ((ch + 15) / 16 * 16); };
  const auto Xp = padded(c.X, c.in_ch), Yp = padded(c.Y, c.out_ch);
  const bool plain_src = c.in_ch < 16 && c.kvol > 1;
  const auto fwd = (plain_src ? 0 : Xp) + Yp - c.Y;
  const auto gemm = c.kernel_t > c.frames ? checked_mul(threads, 4 * c.W + checked_mul(checked_mul(c.in_ch, c.kvol), c.out_positions) * 4) : 0;
  if (!input_needs_grad) return {fwd > Yp ? fwd : Yp, 2 * Yp + gemm};
  return {fwd > Yp ? fwd : Yp, Yp + Xp - (plain_src ? c.X : 0) + gemm};
}

constexpr std::int64_t kernel_volume(const conv_op& op) {
  std::int64_t v = 1;
  for (int d = 1; d <= op.dims; ++d) v = checked_mul(v, op.kernel_at(d));
  return v;
}

/// The shortest reduction (K) per split-K chunk of a weight gradient: 52-271 observed (CV2), none
/// shorter in the traces; CV2's envelope and CV6 c's strided 1x1s split no finer.
inline constexpr std::int64_t cuda_shortest_split_chunk = 64;

/// cuDNN's weight-gradient workspace on CUDA (benchmarks/accuracy/op_rules.md CV1, CV2; traces in
/// reference/cuda-h100, read by trace_cuda.py). It comes from PyTorch's caching allocator
/// (at::native::run_conv_plan under raw_cudnn_convolution_backward_weight_out), so it counts in
/// max_memory_allocated while the weight gradient is computed, on top of dx and dw.
/// CV1: a stride-1 1x1 convolution keeps two weight gradients (2·W: 22 pointwise convs of
/// mobilenet_v2 / efficientnet_b0, every one exactly), none on a 1x1 map (efficientnet_b0's SE convs). CV2: a dense k>1 convolution splits its
/// reduction over N·output positions (K) into chunks of >= 64 (none shorter in the traces), one
/// partial W each, as many as fill the GPU: at most 11.25 MiB of partials (the largest of the
/// traced split reductions; 5.3-11.25 MiB where K allowed more chunks), at least one W.
/// An upper envelope of the resnet18 (224 / 96 px) and temporal traces: cuDNN's heuristics pick
/// the engine, so this is a model, not its formula (H100, cuDNN 9.19). Grouped (depthwise in 16 bits: CV7),
/// strided 1x1 and transposed convs: no rule (op_rules.md CV3); the caller applies it on CUDA to a
/// dense conv whose weight trains. W: the weight in the compute type; reduction: K.
constexpr std::int64_t cuda_wgrad_workspace(const conv_op& op, std::int64_t kvol, std::int64_t W, std::int64_t reduction,
                                            std::int64_t batch) {
  if (kvol == 1) return op.stride == 1 && reduction > batch ? 2 * W : 0;  // a 1x1 map (SE's convs): none
  constexpr std::int64_t filled_gpu = 11 * MiB + 256 * KiB;   // 11.25 MiB: resnet18_b2 layer3, 5·W (CV2)
  const auto chunks = reduction / cuda_shortest_split_chunk;
  if (chunks == 0) return 0;
  const auto cap = W > filled_gpu ? W : filled_gpu;
  return chunks > cap / W ? cap : W * chunks;
}

/// cuDNN's layout workspaces on CUDA for an NCHW (not channels_last) dense convolution
/// (op_rules.md CV4): its engines run NHWC and stage NHWC copies of the input (X), the output (Y)
/// and, for k > 1, the weight (W) in the workspace, forward and backward-data alike; a strided 1x1
/// conv copies X and Y. An envelope of the batch-64 and batch-2 ResNet-18 traces (H100/H200, cuDNN
/// 9.19): at batch 64 every k > 1 conv asked X + Y + W (+16 or +147 B), two of them 8 MiB more;
/// at batch 2 some engines skipped Y. A stride-1 1x1 conv needs no copy (400 B measured).
/// The caller asks for it as an optional workspace: cuDNN's try_configs takes its next engine
/// when the allocation fails.
constexpr std::int64_t cuda_layout_workspace(const conv_op& op, std::int64_t kvol, std::int64_t X, std::int64_t Y, std::int64_t W) {
  if (op.channels_last) return 0;
  if (kvol > 1) return X + Y + W;
  return op.stride > 1 ? X + Y : 0;
}

/// The forward's layout workspace: cuda_layout_workspace, but a stride-1 1x1 conv whose weight has
/// C_in·C_out ≥ 2^20 elements stages X + Y (op_rules.md CV4 d; H200, cuDNN 9.19): every such conv
/// in 7 traces (ResNet-50 fp32 b8 448², b32, b182, bf16 b32, fp16 b64, WideResNet-50-2 bf16 b16,
/// layer4; ResNet-50 b8 448² layer4.1.conv1 15.31 MiB = 3,211,264 + 12,845,056 + 147). Below it
/// none (DenseNet-121's 1024->512 transition at 14², ResNet-50's layer4.0.conv1 at b8-b32) but for
/// one 2^19 weight on a longer GEMM (ResNet-50 fp16 b64 layer4.0.conv1): cuDNN weighs M as well.
/// In 16 bits the weight gradient stages the same copies (cuda_wgrad_copies).
constexpr std::int64_t cuda_forward_layout_workspace(const conv_op& op, std::int64_t kvol, std::int64_t X, std::int64_t Y, std::int64_t W,
                                                      std::int64_t weight_elements) {
  constexpr std::int64_t pointwise_stages_from = std::int64_t{1} << 20;
  const bool wide_pointwise = kvol == 1 && op.stride == 1 && !op.channels_last && weight_elements >= pointwise_stages_from;
  return wide_pointwise ? X + Y : cuda_layout_workspace(op, kvol, X, Y, W);
}

/// Does the forward ask for its layout copies (CV4)? Not for a stride-1 conv whose input channels
/// cuDNN pads (CV5; op_rules.md CV6 e): VGG's 3-channel 3×3 stem in 16 bits asked none in 4 traces
/// (VGG16 bf16 b4, fp16 b16 and b128, VGG11-BN bf16 b32; H200, cuDNN 9.19) where the layout rule
/// gives X + Y + W (924,853,248 B at b128), while its weight gradient staged them (929,608,848 B =
/// X + Y + W + 258 fp32 partials + 144 at b128). The strided stems' forwards (ResNet, ConvNeXt,
/// ViT) stage their padded copies, but for a small patch conv in 16 bits (kernel = stride <= 4, CV6 f):
/// ConvNeXt-T's 4×4/4 stem asked a 192 B workspace in the forward at bf16 b16, b32 and b64 where
/// ViT-B/16's 16×16/16 staged X·8/3 + Y + W·8/3; the switch between kernel 4 and 16 is untraced.
constexpr bool cuda_forward_stages_copies(const conv_op& op, std::int64_t in_ch, std::int64_t staged_ch, dtype t) {
  const bool small_patches = t != dtype::fp32 && !op.rectangular() && op.kernel == op.stride && op.padding == 0 && op.kernel <= 4 && staged_ch != in_ch;
  return !small_patches && (op.stride > 1 || staged_ch == in_ch);
}

/// The backward's layout workspace (CV4): the forward's, and for a stride-1 1x1 conv computed in
/// fp32 (TF32) on a map larger than 1x1, X + Y (EfficientNet-B0 b32's 112² and 56² pointwise
/// weight gradients staged 181.8, 78.1 and 68.8 MB; the rest took 32·W partials, less). Not seen
/// in 16 bits (MobileNetV3 b64 bf16's reserved peak went +9 % over with it), so fp32 only; nor
/// below batch 8 (bev_dwconv_b1_64's 1x1 convs asked Y/2 + W + 256 B, EfficientNet-B0 b2 96²'s
/// no X + Y): `stages_copies` is fp32 from batch 8, the weight gradient's threshold
/// (cuda_stages_copies).
constexpr std::int64_t cuda_backward_layout_workspace(const conv_op& op, std::int64_t kvol, std::int64_t X, std::int64_t Y, std::int64_t W,
                                                      bool stages_copies, bool map_larger_than_1x1) {
  const bool pointwise = kvol == 1 && op.stride == 1 && !op.channels_last;
  return pointwise ? (stages_copies && map_larger_than_1x1 ? X + Y : 0) : cuda_layout_workspace(op, kvol, X, Y, W);
}

/// Input channels of the NHWC copies cuDNN stages: padded to the tensor cores' alignment, 8
/// elements in 16 bits for every dense convolution, 4 in fp32 (TF32) for one over non-overlapping
/// patches (kernel = stride, no padding: a ViT's patch embedding) only (op_rules.md CV5, CV6).
/// ViT-B/16's conv_proj (3 channels): fp32 b115 asked 164,712,464 B = X·4/3 + Y + W·4/3 + 8,208,
/// bf16 b16 20,807,696 = X·8/3 + Y + W·8/3 + 16; ResNet-18's overlapping 7×7/2 stem in bf16 at
/// b32 77,120,528 = X·8/3 + Y + W·8/3 + 16, in fp32 unpadded (ResNet-18/50 conv1 at b2, b32, b64:
/// X + Y + W + 16). fp16's engines pad an overlapping strided stem to 4 on large maps (CV6 d:
/// ResNet-18 b128, ResNet-50 b16 and b64, 7×7/2 at `positions` = N·H_out·W_out 200,704 to
/// 1,605,632: X·4/3 + Y + W·4/3 + 16, forward and weight gradient; ResNet-18 b8, 100,352: the
/// forward alone, 16,081,424 B, its weight gradient padding to 8) but to 8 at ResNet-18 b2 96²
/// (4,608) and b2 224² (25,088) and on VGG16's stride-1 stem, as bf16 does every one: from the
/// smallest traced that padded to 4, so an untraced size between takes the larger copy.
/// `weight_gradient`: the channels the weight gradient stages (else the forward's).
constexpr std::int64_t cuda_staged_in_channels(const conv_op& op, std::int64_t in_ch, dtype t, std::int64_t positions, bool weight_gradient) {
  // H200, cuDNN 9.19: ResNet-18 fp16 b8 224² (forward), ResNet-50 fp16 b16 224² (both)
  const std::int64_t fp16_stem_pads_to_4_from = weight_gradient ? 200'704 : 100'352;
  const bool patches = !op.rectangular() && op.kernel == op.stride && op.padding == 0 && op.kernel > 1;
  const bool fp16_large_stem = t == dtype::fp16 && !patches && op.stride > 1 && op.kernel > 1 && positions >= fp16_stem_pads_to_4_from;
  const std::int64_t align = t == dtype::fp32 ? (patches ? 4 : 1) : fp16_large_stem ? 4 : 8;
  return (in_ch + align - 1) / align * align;
}

/// Does cuDNN stage layout copies for its fp32 backward engines (CV4)? From batch 8: ResNet-18's
/// layer1 weight gradient asks 15·W at batch 4 and X + Y + 15·W at 8, 16, 32 and 64.
constexpr bool cuda_stages_copies(dtype t, std::int64_t batch) { return t == dtype::fp32 && batch >= 8; }

/// The weight gradient's layout copies beside its partials: in fp32 X + Y where the backward stages
/// copies (CV4, from batch 8); in 16 bits the forward's copies at every batch (op_rules.md CV6:
/// ResNet-18 bf16 b2 96², every 3×3 and the strided 1×1s: X + Y + W + 16 and X + Y (+ partials);
/// b32 224²: X + Y + W + 16 or + 147 beside fp32 partials). `forward`: cuda_layout_workspace,
/// `backward`: cuda_backward_layout_workspace.
constexpr std::int64_t cuda_wgrad_copies(dtype t, bool stages, std::int64_t forward, std::int64_t backward, std::int64_t X, std::int64_t Y) {
  if (t != dtype::fp32) return forward;
  return stages && backward > 0 ? X + Y : 0;
}

/// The workspace of the engine cuDNN falls back to when the allocator refuses a 16-bit weight
/// gradient's (op_rules.md A20): an fp32 copy of the weight, W32 + W32/512 + 16 B (H200, cuDNN
/// 9.19, every refused weight gradient traced: ResNet-34 bf16 b901 layer4 3×3 512->512
/// 9,455,632 B; VGG16 fp16 b304 64->64, 128->128, 256->256 and 512->512 3×3 147,760, 590,992,
/// 2,363,920 and 9,455,632 B). fp32's fell back to 4,096 B (DenseNet-121 b120): none counted.
constexpr std::int64_t cuda_wgrad_fallback_workspace(dtype t, std::int64_t weight_elements) {
  if (t == dtype::fp32) return 0;
  const auto w32 = weight_elements * 4;
  return w32 + w32 / 512 + 16;
}

/// Split-K partials of a 16-bit weight gradient whose channels need no padding (op_rules.md
/// CV6 c): fp32 copies of the weight, an upper envelope of 11 traces (ResNet-18 bf16/fp16 at b2 96²
/// and b16, b32, b64, b128 224², ResNet-34 b64, ResNet-50 b32, VGG16 b4 and b16; H200, cuDNN 9.19).
/// k > 1: none up to K = 12,544 (7 shapes), from K = 25,088 up to 13 (the most seen, in 5 shapes
/// at every K from 25,088 to 802,816; fewer on wide weights: 3, 4, 7) and at most the largest
/// traced (VGG16 b16's 256->256 at 56²: 7 of 2,359,296 B). A strided 1x1: from K = 6,272 (the
/// smallest split reduction: ResNet-18 fp16 b128's 256->512 took 7 there, bf16 b32's 128->256
/// none) as many as fit the largest traced
/// (3.75 MiB: 30 of 131,072 B; 117 of 32,768 B), none shorter than CV2's 64. Which engine splits,
/// and how far, is cuDNN's heuristic: this bounds what it was seen to take, it is not its formula.
/// Not modelled: a 3.1-7.5 MiB workspace that is no multiple of the weight, asked by wide weights
/// (256->512, 512->512) at K = 6,272 to 12,544 (ResNet-18 fp16 b128, VGG16 fp16 b16).
constexpr std::int64_t cuda_aligned_wgrad_partials(std::int64_t kvol, std::int64_t partial, std::int64_t reduction) {
  constexpr std::int64_t kernel_split_from = 25'088, kernel_most_partials = 13;
  constexpr std::int64_t kernel_largest = 7 * 2'359'296;           // 16,515,072 B: VGG16 b16, 256->256 at 56²
  constexpr std::int64_t pointwise_split_from = 6'272;
  constexpr std::int64_t pointwise_largest = 3 * MiB + 768 * KiB;  // 3.75 MiB: ResNet-18 b128, 128->256 at 14²
  const bool pointwise = kvol == 1;
  if (reduction < (pointwise ? pointwise_split_from : kernel_split_from)) return 0;
  const auto most = pointwise ? reduction / cuda_shortest_split_chunk : kernel_most_partials;
  const auto fit = (pointwise ? pointwise_largest : kernel_largest) / partial;
  return (most < fit ? most : fit) * partial;
}

/// The weight gradient's partials in 16 bits (op_rules.md CV6): split-K partial weights are fp32
/// (the accumulator) copies of the staged weight. A stem whose channels are padded takes CV2's
/// envelope on them (ResNet-18's 7×7/2 asked 74 at b2 96², 61 at b32 224²: CV2 gives 72 and
/// 11.25 MiB); a convolution whose channels need no padding, and a strided 1x1, the envelope of
/// cuda_aligned_wgrad_partials. fp32, and a stride-1 1×1: CV1, CV2 on W.
constexpr std::int64_t cuda_wgrad_partials(const conv_op& op, std::int64_t kvol, std::int64_t W, std::int64_t reduction, std::int64_t batch,
                                           dtype t, std::int64_t in_ch, std::int64_t staged_ch) {
  if (t == dtype::fp32 || (kvol == 1 && op.stride == 1)) return cuda_wgrad_workspace(op, kvol, W, reduction, batch);
  const auto partial = W / bytes_per_element(t) * bytes_per_element(dtype::fp32) / in_ch * staged_ch;
  if (staged_ch == in_ch) return cuda_aligned_wgrad_partials(kvol, partial, reduction);
  return cuda_wgrad_workspace(op, kvol, partial, reduction, batch);
}

/// Output shape of `op` on `in` ([C, spatial...]), checking every argument.
constexpr shape conv_output_shape(const conv_op& op, const shape& in) {
  if (in.rank != op.dims + 1) shape_mismatch_between_layers();
  const bool transposed = op.transposed;
  const auto in_ch = in[0];
  const auto out_ch = op.out_channels == 0 ? in_ch : op.out_channels;
  const auto st = op.stride, dil = op.dilation;
  const auto grp = op.groups == -1 ? in_ch : op.groups;
  // kernel_w, padding_w: a 2-D convolution's; kernel_t, padding_t, stride_t: a 3-D one's; not both
  const bool own_w = (op.own_dim & conv_op::own_w) != 0, own_t = (op.own_dim & conv_op::own_t) != 0;
  if (transposed ? (op.own_dim & ~conv_op::weight_norm_bits) != 0 : (own_w && (own_t || op.dims != 2)) || (own_t && op.dims != 3)) invalid_layer_argument();
  if (op.kernel <= 0) kernel_size_must_be_positive();  // kernel_w is checked where it is given
  const auto pad = op.padding;
  if (st <= 0) stride_must_be_positive();
  if (dil <= 0 || pad < 0 || grp <= 0 || out_ch <= 0) invalid_layer_argument();
  if (in_ch % grp != 0 || out_ch % grp != 0) channels_not_divisible_by_groups();
  if (op.output_padding < 0 || (transposed && op.output_padding >= st && op.output_padding >= dil))
    require_input(false, conv_transpose_output_padding_not_below_stride_or_dilation, op.output_padding, in);
  shape out = in;
  out[0] = out_ch;
  for (int d = 1; d <= op.dims; ++d) {
    const auto i = in[d], k = op.kernel_at(d), pad = op.padding_at(d), step = op.stride_at(d);
    if (pad < 0) invalid_layer_argument();
    const auto o = transposed ? (i - 1) * step - 2 * pad + dil * (k - 1) + op.output_padding + 1
                              : (i + 2 * pad - dil * (k - 1) - 1) / step + 1;
    if (o <= 0 || (!transposed && i + 2 * pad < dil * (k - 1) + 1)) {  // one test on the common path
      if (!transposed) require_input(false, conv_kernel_larger_than_padded_input, dil * (k - 1) + 1, padded(in, pad));
      output_size_not_positive();
    }
    out[d] = o;
  }
  return out;
}

/// cuDNN's workspaces of a dense convolution on CUDA, `y` its output (Y bytes), W its weight's
/// bytes in the compute type: the weight gradient's partials when the weight trains (CV1, CV2)
/// and, with the caching allocator model, the layout copies forward and backward (CV4, optional
/// requests). Without the model the budget keeps cuDNN's workspace as one device-level term
/// (memory_budget::cudnn_workspace), as before CV4: the per-conv copies cost compile-time steps
/// that the default budget of a 1,600-layer model cannot spare (benchmarks/compile_time).
constexpr void cuda_conv_workspaces(layer_ctx& c, const conv_op& op, std::int64_t kvol, const value& xin, const value& y, std::int64_t Y,
                                    std::int64_t W, std::int32_t part) {
  const auto positions = Y / (y.s[0] * bytes_per_element(y.type));  // output positions · batch
  const auto n = c.s.record_of(y);
  const bool weight_trains = c.part_trains(part);
  const auto in_ch = xin.s[0], staged_ch = cuda_staged_in_channels(op, in_ch, y.type, positions, /*weight_gradient=*/true);
  const auto partials = weight_trains ? cuda_wgrad_partials(op, kvol, W, positions, c.s.batch, y.type, in_ch, staged_ch) : 0;
  if (!c.s.log_allocator) {
    // batch-independent when one more sample adds nothing (1x1: 2·W; k > 1: at CV2's cap), so
    // that max_micro_batch's lines do not extrapolate a capped workspace (check.hpp)
    const auto per_sample = positions / c.s.batch;
    const bool fixed = !weight_trains || partials == cuda_wgrad_partials(op, kvol, W, positions + per_sample, c.s.batch + 1, y.type,
                                                                         in_ch, staged_ch);
    c.s.backward_temp(n, partials, fixed);
    return;
  }
  const auto fwd_ch = cuda_staged_in_channels(op, in_ch, y.type, positions, /*weight_gradient=*/false);
  const auto weight_elements = W / bytes_per_element(y.type);
  const auto X = c.s.bytes_of_value(xin) / in_ch * staged_ch, X_fwd = c.s.bytes_of_value(xin) / in_ch * fwd_ch;
  const auto W_fwd = W / in_ch * fwd_ch;
  W = W / in_ch * staged_ch;
  const bool stages = cuda_stages_copies(y.type, c.s.batch);
  const auto copies = cuda_forward_layout_workspace(op, kvol, X, Y, W, W / bytes_per_element(y.type));
  const auto layout = cuda_backward_layout_workspace(op, kvol, X, Y, W, stages, positions > c.s.batch);
  const auto forward = cuda_forward_layout_workspace(op, kvol, X_fwd, Y, W_fwd, W_fwd / bytes_per_element(y.type));
  c.s.optional_workspace(cuda_forward_stages_copies(op, in_ch, fwd_ch, y.type) ? forward : 0);
  // the weight gradient stages copies beside its partials, one request larger than backward-data's
  c.s.backward_workspace(n, xin.requires_grad ? layout : 0,
                         weight_trains ? cuda_wgrad_copies(y.type, stages, copies, layout, X, Y) + partials : 0,
                         weight_trains ? cuda_wgrad_fallback_workspace(y.type, weight_elements) : 0);
}

/// cuDNN's weight-gradient workspace of a 16-bit depthwise convolution (op_rules.md CV7): N · C·k^d
/// · 32 B, eight fp32 copies of the weight per sample (`cuda-h200/tv_convnext_tiny_b{16,32,64}_224_bf16`:
/// every 7×7 stage at b32, C = 96 to 768, 4,816,896 to 38,535,168 B = 32 · C · 49 · 32; stage 1 at
/// b16 2,408,448 and b64 9,633,792 B). An optional request (`run_conv_plan`), with the allocator model;
/// none in fp32 (not traced). Budgeted as the node's backward workspace, as CV4's.
constexpr void cuda_depthwise_wgrad_workspace(layer_ctx& c, const value& y, std::int64_t weight_elements, std::int32_t part) {
  const bool weight_trains = c.part_trains(part);
  if (!c.s.log_allocator || !weight_trains || y.type == dtype::fp32) return;
  c.s.backward_workspace(c.s.record_of(y), 0, checked_mul(checked_mul(c.s.batch, weight_elements), 32));
}

/// The CPU transients of `op` on `x` (none on CUDA): 2.6's dense fp32 3-D rule or the general one.
/// 2.6 runs a 1-D convolution fed a channels-last-strided input ([B, L, C].transpose(1, 2), the
/// text CNN's embedding) on a contiguous copy of it, made in forward and again in backward: X more
/// in each (op_rules.md 2.6 #56, conv1d_layout_probe.py: 9 shapes, dense and depthwise; a 4-D channels-last input runs
/// in place, so `channels_last` keeps its 2-D meaning for the rest).
constexpr conv_transients conv_cpu_transients(const layer_ctx& c, const conv_op& op, const value& x, const shape& out, std::int64_t Y,
                                              std::int64_t weight, std::int64_t grp, dtype t) {
  if (!c.s.on_cpu()) return {};
  const auto X = c.s.bytes_of_value(x), W = bytes_of(weight, dtype::fp32), in_ch = x.s[0], out_ch = out[0];
  if (c.s.torch26_cpu() && op.dims == 3 && !op.transposed && grp == 1 && t == dtype::fp32)
    return cpu_conv3d_transients({X, Y, W, in_ch, out_ch, kernel_volume(op), op.kernel_at(1), x.s[1], out.numel() / out_ch}, x.requires_grad,
                                 c.s.plan.cpu_threads);
  const bool one_d_channels_last = op.dims == 1 && op.channels_last;
  auto tr = cpu_conv_transients(c.s, X, Y, W, in_ch, grp, op.rectangular() ? 0 : op.kernel, op.widest_stride(), x.requires_grad, op.transposed,
                                op.channels_last && !one_d_channels_last, t != dtype::fp32, c.trainable);
  if (one_d_channels_last && c.s.torch26_cpu() && !op.transposed) tr.forward += X, tr.backward += X;
  // 2.6's input gradient of a dense conv computes its output's gradient in 16-channel blocks, as
  // the 3-D one does (#52): X + Yp, Yp the output padded to a multiple of 16 channels (op_rules.md
  // 2.6 #58: a U-Net's 1x1 conv to 2 classes holds 2.1·X, not X + Y)
  if (c.s.torch26_cpu() && grp == 1 && !op.transposed && x.requires_grad && c.trainable && out_ch % 16 != 0 && t == dtype::fp32) {
    const auto padded = X + Y / out_ch * ((out_ch + 15) / 16 * 16);
    if (padded > tr.backward) tr.backward = padded;
  }
  return tr;
}

/// weight_norm on a convolution (dim 0): every forward computes w = g · v / ‖v‖
/// (_weight_norm_interface: w and one norm per output channel), which the convolution keeps in
/// place of its weight; WeightNormInterfaceBackward0 keeps the norms and turns w's gradient into
/// v's and g's, w's gradient beside v's until it returns (op_rules.md 2.6 #61). The layer's weight
/// key counts v, the next key g (`out_channels` values, their own .grad). The hook form
/// (torch.nn.utils.weight_norm) sets the new w as the module's `weight`, so the last one stays
/// between steps (resident, as a buffer) and each forward holds the old one until the new is made
/// (measured: TCN and HiFi-GAN at the step's start hold every layer's w); the parametrization's
/// lives from the convolution to its backward.
constexpr void weight_norm_of(layer_ctx& c, const value& y, const conv_op& op, std::int64_t weight, std::int64_t out_channels,
                              std::int32_t part) {
  c.add_param(out_channels);
  auto& s = c.s;
  const auto n = s.record_of(y);
  const auto w = bytes_of(weight, c.param_type());
  if (op.weight_norm_hook()) {
    c.buffer_bytes += w;
    s.transient(w, true);
    const value kept{s.allocate(w, /*external=*/true), {}, c.param_type(), false};
    s.save(n, kept);
    s.release(kept);
    s.save_new(n, bytes_of(out_channels, c.param_type()), 1, /*fixed=*/true);
  } else {
    s.save_new(n, w + bytes_of(out_channels, c.param_type()), 1, /*fixed=*/true);
  }
  if (c.trainable) s.backward_temp(n, w, true);
  c.param_grads(n, out_channels, part + 1);
}

/// A convolution on `x` ([C, spatial...]); `part` selects the parameter key within the layer.
constexpr value convolution(layer_ctx& c, const value& x, const conv_op& op, std::int32_t part = 0) {
  const shape out = conv_output_shape(op, x.s);
  const bool transposed = op.transposed;
  const auto in_ch = x.s[0], out_ch = out[0];
  const auto grp = op.groups == -1 ? in_ch : op.groups;
  const auto kvol = kernel_volume(op);
  const auto weight = checked_mul(checked_mul(in_ch, out_ch / grp), kvol);  // [out, in/g, k..] or [in, out/g, k..]
  const auto bias = op.bias ? out_ch : 0;
  c.add_param(weight);
  c.add_param(bias);
  const dtype t = c.matmul_type(x.type);
  const auto weight_copy = autocast_weight_copy(c, weight, bias);  // autocast casts the bias and weight, then the input
  value xin = cast_to(c.s, x, t);
  const auto Y = c.s.bytes_of_value(out, t);
  const auto tr = conv_cpu_transients(c, op, x, out, Y, weight, grp, t);
  // convolution_backward takes the input and the weight even when only one gradient is wanted
  // (under autocast the weight's bf16 copy: op_rules.md 2.6 #26, ac_conv2d_x_nograd).
  value y = with_params(c, xin, out, t, weight + bias, true, 0, tr.forward, tr.backward, weight, part, /*weight_saved_always=*/true, bias,
                          weight_copy);
  if (!c.s.on_cpu() && grp == 1 && !transposed) cuda_conv_workspaces(c, op, kvol, xin, y, Y, bytes_of(weight, t), part);
  if (!c.s.on_cpu() && grp == in_ch && grp == out_ch && !transposed) cuda_depthwise_wgrad_workspace(c, y, weight, part);
  if (op.weight_normed()) weight_norm_of(c, y, op, weight, transposed ? in_ch : out_ch, part);
  if (const auto n = c.s.record_of(y); n >= 0 && c.s.replay_cursor < 0) c.s.node(n).copies_sliced_grad = true;
  c.s.release(xin);
  return y;
}

/// cuDNN's GEMM algorithms stage the unfolded input: [C·k^d, output positions] per sample.
/// Budgeted for convolution layers of the model (not for convolutions inside composite ops,
/// as before the op-traits refactor; see docs/architecture.md, "Known gaps").
constexpr std::int64_t im2col_bytes(const sim& s, const conv_op& op, const shape& in, const shape& out, dtype t) {
  return checked_mul(s.bytes_of_value(out, t) / (out[0] > 0 ? out[0] : 1), checked_mul(in[0], kernel_volume(op)));
}

}  // namespace detail

template <>
struct op_traits<conv_op> {
  static constexpr const char* name(const conv_op& op) {
    return op.transposed ? "conv_transpose" : "conv";
  }
  static constexpr detail::value lower(detail::layer_ctx& c, const conv_op& op, const detail::value& x) {
    detail::value y = detail::convolution(c, x, op);
    c.conv_workspace = detail::im2col_bytes(c.s, op, x.s, y.s, y.type);
    return y;
  }
  static constexpr std::int64_t flops(const conv_op& op, const shape& in, const shape& out) {
    const auto g = op.groups == -1 ? in[0] : (op.groups > 0 ? op.groups : 1);
    if (op.transposed) return 2 * (out[0] / g) * detail::kernel_volume(op) * in.numel();
    return 2 * (in[0] / g) * detail::kernel_volume(op) * out.numel();
  }
};

namespace detail {
constexpr void apply_conv_option(conv_op& o, stride s) { o.stride = s.value; }
constexpr void apply_conv_option(conv_op& o, padding p) { o.padding = p.value; }
constexpr void apply_conv_option(conv_op& o, dilation d) { o.dilation = d.value; }
constexpr void apply_conv_option(conv_op& o, groups g) { o.groups = g.value; }
constexpr void apply_conv_option(conv_op& o, depthwise_t) { o.groups = -1; }
constexpr void apply_conv_option(conv_op& o, output_padding p) { o.output_padding = p.value; }
constexpr void apply_conv_option(conv_op& o, no_bias_t) { o.bias = false; }
constexpr void apply_conv_option(conv_op& o, channels_last_input_t) { o.channels_last = true; }
constexpr void apply_conv_option(conv_op& o, weight_norm_t) { o.own_dim |= conv_op::weight_norm_bits; }
constexpr void apply_conv_option(conv_op& o, weight_norm_parametrization_t) { o.own_dim |= conv_op::weight_normed_bit; }
/// Writes field `field` (0 kernel, 1 padding, 2 stride) of the own dimension `which` (conv_op::own_w,
/// own_t): the value + 1, at least `smallest`.
constexpr void set_own_dim(conv_op& o, std::int64_t which, int field, std::int64_t v, std::int64_t smallest) {
  if (v < smallest || v >= 0xFFFFE) invalid_layer_argument();
  const auto at = 20 * field;
  o.own_dim = (o.own_dim & ~(std::int64_t{0xFFFFF} << at)) | (v + 1) << at | which;
}
constexpr void apply_conv_option(conv_op& o, kernel_w k) { set_own_dim(o, conv_op::own_w, 0, k.value, 1); }
constexpr void apply_conv_option(conv_op& o, padding_w p) { set_own_dim(o, conv_op::own_w, 1, p.value, 0); }
constexpr void apply_conv_option(conv_op& o, kernel_t k) { set_own_dim(o, conv_op::own_t, 0, k.value, 1); }
constexpr void apply_conv_option(conv_op& o, padding_t p) { set_own_dim(o, conv_op::own_t, 1, p.value, 0); }
constexpr void apply_conv_option(conv_op& o, stride_t s) { set_own_dim(o, conv_op::own_t, 2, s.value, 1); }

template <class... Opts>
constexpr conv_op make_conv(bool transposed, std::int64_t dims, std::int64_t out_channels, std::int64_t kernel, Opts... opts) {
  conv_op o{dims, out_channels, kernel, 1, 0, 1, 1, 0, true, transposed, false, 0};
  (apply_conv_option(o, opts), ...);
  return o;
}
}  // namespace detail

/// nn.Conv1d/2d/3d(in, out, kernel, stride, padding, dilation, groups, bias).
/// `out_channels` 0 keeps the input's channel count (handy with `depthwise`).
template <class... Opts>
constexpr layer conv1d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return as_layer(detail::make_conv(false, 1, out_channels, kernel, o...)); }
template <class... Opts>
constexpr layer conv2d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return as_layer(detail::make_conv(false, 2, out_channels, kernel, o...)); }
template <class... Opts>
constexpr layer conv3d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return as_layer(detail::make_conv(false, 3, out_channels, kernel, o...)); }
/// nn.ConvTranspose1d/2d/3d.
template <class... Opts>
constexpr layer conv_transpose1d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return as_layer(detail::make_conv(true, 1, out_channels, kernel, o...)); }
template <class... Opts>
constexpr layer conv_transpose2d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return as_layer(detail::make_conv(true, 2, out_channels, kernel, o...)); }
template <class... Opts>
constexpr layer conv_transpose3d(std::int64_t out_channels, std::int64_t kernel, Opts... o) { return as_layer(detail::make_conv(true, 3, out_channels, kernel, o...)); }
/// Depthwise 2-D convolution (groups = channels), e.g. ConvNeXt's 7×7.
template <class... Opts>
constexpr layer depthwise_conv2d(std::int64_t kernel, Opts... o) { return as_layer(detail::make_conv(false, 2, 0, kernel, depthwise, o...)); }

}  // namespace gpubudget
