// cuDNN's layout workspaces (benchmarks/accuracy/op_rules.md CV4), held to the requests of the
// H200 traces in benchmarks/accuracy/reference/cuda-h200/ (fp32, cuDNN 9.19): the rule's bytes,
// and what the caching allocator model does with them (optional requests).
#include <catch2/catch.hpp>
#include <gpubudget/gpubudget.hpp>

#include <cstdint>

namespace {
using namespace gpubudget;

constexpr conv_op conv3x3{.dims = 2, .out_channels = 64, .kernel = 3, .stride = 1, .padding = 1, .dilation = 1, .groups = 1};
constexpr conv_op downsample{.dims = 2, .out_channels = 128, .kernel = 1, .stride = 2, .padding = 0, .dilation = 1, .groups = 1};
constexpr conv_op pointwise{.dims = 2, .out_channels = 96, .kernel = 1, .stride = 1, .padding = 0, .dilation = 1, .groups = 1};
}  // namespace

TEST_CASE("layout workspace: NHWC copies of input, output and weight (CV4)") {
  // ResNet-18 b64 layer1 3x3 64->64 at 56x56: X = Y = 51,380,224, W = 147,456; the trace asked
  // 102,908,051 forward and backward-data (X + Y + W + 147)
  constexpr std::int64_t X = 51380224, W = 147456;
  CHECK(detail::cuda_layout_workspace(conv3x3, 9, X, X, W) == 2 * X + W);
  CHECK(detail::cuda_backward_layout_workspace(conv3x3, 9, X, X, W, true, true) == 2 * X + W);
  // a strided 1x1 (downsample) copies X and Y: 12,845,056 + 6,422,528 (trace: 19,267,600)
  CHECK(detail::cuda_layout_workspace(downsample, 1, 12845056, 6422528, 524288) == 12845056 + 6422528);
  // a stride-1 1x1 copies nothing forward; in fp32 its backward stages X + Y on a map, not in 16 bits
  CHECK(detail::cuda_layout_workspace(pointwise, 1, 9633792, 57802752, 13824) == 0);
  CHECK(detail::cuda_backward_layout_workspace(pointwise, 1, 9633792, 57802752, 13824, true, true) == 9633792 + 57802752);
  CHECK(detail::cuda_backward_layout_workspace(pointwise, 1, 9633792, 57802752, 13824, false, true) == 0);
  CHECK(detail::cuda_backward_layout_workspace(pointwise, 1, 9633792, 57802752, 13824, true, false) == 0);
  conv_op nhwc = conv3x3;
  nhwc.channels_last = true;
  CHECK(detail::cuda_layout_workspace(nhwc, 9, X, X, W) == 0);
}

TEST_CASE("the forward's stride-1 1x1 copies go by the weight's size (CV4 d)") {
  // H200 call 11, ResNet-50 fp32 b8 448² (cuda-h200/tv_resnet50_b8_448_fp32.json.gz): layer4.1.conv1
  // 2048->512 at 14² asked X + Y (+147 B); layer4.0.conv1 1024->512 (2^19 elements) nothing
  constexpr conv_op wide{.dims = 2, .out_channels = 512, .kernel = 1, .stride = 1, .padding = 0, .dilation = 1, .groups = 1};
  constexpr std::int64_t X = 8LL * 2048 * 196 * 4, Y = 8LL * 512 * 196 * 4;
  CHECK(detail::cuda_forward_layout_workspace(wide, 1, X, Y, 2048 * 512 * 4, 2048 * 512) == X + Y);
  CHECK(detail::cuda_forward_layout_workspace(wide, 1, X / 2, Y, 1024 * 512 * 4, 1024 * 512) == 0);
  CHECK(detail::cuda_forward_layout_workspace(pointwise, 1, X, Y, 13824, 36 * 96) == 0);
  conv_op nhwc = wide;
  nhwc.channels_last = true;
  CHECK(detail::cuda_forward_layout_workspace(nhwc, 1, X, Y, 2048 * 512 * 4, 2048 * 512) == 0);
  // strided, and k > 1: as cuda_layout_workspace
  CHECK(detail::cuda_forward_layout_workspace(downsample, 1, 12845056, 6422528, 524288, 256 * 512) == 12845056 + 6422528);
  CHECK(detail::cuda_forward_layout_workspace(conv3x3, 9, X, X, 147456, 36864) == 2 * X + 147456);
}

TEST_CASE("layout workspaces count in the uncapped peak, with the allocator model only") {
  // ResNet-18's first conv at batch 64 asks 244 MB of layout copies beside its 205 MB output
  // (the optional requests' cap behaviour: test_caching_allocator.cpp, try_malloc)
  const auto net = sequential(input(3, 224, 224), conv2d(64, 7, stride(2), padding(3)), relu(), conv2d(64, 3, padding(1)));
  const training plan{.batch = 64, .model_allocator = true};
  const auto b = budget_totals(net, plan, devices::h100_80gb);
  REQUIRE(b.allocator_modelled);
  CHECK(b.allocated_fwd_bwd_peak > 205520896 + 244093696);
  // without the model the walk's peak has no copies: the device-level cuDNN term stands for them
  const auto flat = budget_totals(net, training{.batch = 64}, devices::h100_80gb);
  CHECK(flat.fwd_bwd_peak < b.allocated_fwd_bwd_peak);
  CHECK(flat.cudnn_workspace > 0);
}

TEST_CASE("the fp32 weight gradient stages X and Y from batch 8 (CV4)") {
  // one 3x3 conv whose weight trains, on an input that needs no gradient: its backward is the
  // weight gradient alone. Live beside it: the input, the output and the output's gradient
  // (3 tensors of X), and its workspace: the partials (at most 11.25 MiB, CV2) at batch 4,
  // X + Y + the partials from batch 8 (ResNet-18's layer1: 15,040,512 B at batch 4,
  // 15,057,575 = X + Y + 15·W at batch 8)
  const auto net = sequential(input(64, 56, 56), conv2d(64, 3, padding(1)));
  auto peak = [&](std::int64_t batch) {
    const auto b = budget_totals(net, training{.batch = batch, .model_allocator = true}, devices::h100_80gb);
    REQUIRE(b.allocator_modelled);
    return b.allocated_fwd_bwd_peak;
  };
  constexpr std::int64_t X4 = 4 * 64 * 56 * 56 * 4, X8 = 2 * X4;
  const std::int64_t partials_cap = 11 * MiB + 256 * KiB;
  CHECK(peak(4) < 3 * X4 + partials_cap + 4 * MiB);  // no copies at batch 4 (4 MiB: the weight's gradient, rounding)
  CHECK(peak(8) > 5 * X8);                            // X + Y beside the three tensors at batch 8
}

TEST_CASE("patch convolutions stage their input channels padded to the tensor cores' alignment (CV5)") {
  // ViT-B/16's conv_proj (3 -> 768, kernel = stride = 16): 3 channels staged as 4 in fp32 (TF32)
  // and as 8 in 16 bits; overlapping stems (ResNet's 7x7/2, padding 3) stay at 3 in fp32 only
  constexpr conv_op patch{.dims = 2, .out_channels = 768, .kernel = 16, .stride = 16, .padding = 0, .dilation = 1, .groups = 1};
  constexpr conv_op stem{.dims = 2, .out_channels = 64, .kernel = 7, .stride = 2, .padding = 3, .dilation = 1, .groups = 1};
  CHECK(detail::cuda_staged_in_channels(patch, 3, dtype::fp32, 115 * 196, true) == 4);
  CHECK(detail::cuda_staged_in_channels(patch, 3, dtype::bf16, 16 * 196, true) == 8);
  CHECK(detail::cuda_staged_in_channels(patch, 16, dtype::fp16, 16 * 196, true) == 16);
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::fp32, 64 * 112 * 112, true) == 3);
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::bf16, 64 * 112 * 112, true) == 8);  // CV6
  // the forward's request at bf16 batch 16 (vit_b_16_b16_224_bf16_foreach: 20,807,696 B = this + 16)
  constexpr std::int64_t X = 16 * 3 * 224 * 224 * 2, Y = 16 * 768 * 14 * 14 * 2, W = 768 * 3 * 256 * 2;
  CHECK(detail::cuda_layout_workspace(patch, 256, X / 3 * 8, Y, W / 3 * 8) == 20807680);
}

TEST_CASE("a ViT's patch embedding asks for the padded copies in the allocator model (CV5)") {
  // frozen, at fp32 batch 115: the step's peak is the forward's output beside conv_proj's
  // workspace. With 3 input channels staged as 4 the workspace is the 4-channel input's, so the
  // 3- and 4-channel peaks are equal (unpadded copies: 24.8 MB apart)
  auto peak = [](std::int64_t channels) {
    const auto net = sequential(input(channels, 224, 224), patch_embedding(768, 16, false, false));
    const auto b = budget_totals(net, training{.batch = 115, .freeze_all = true, .model_allocator = true}, devices::h100_80gb);
    REQUIRE(b.allocator_modelled);
    return b.allocated_fwd_bwd_peak;
  };
  CHECK(peak(3) == peak(4));
  // Y beside X·4/3 + Y + W·4/3 (the trace asked 164,712,464 B for the workspace)
  constexpr std::int64_t Y = 115LL * 768 * 196 * 4;
  CHECK(peak(3) >= Y + 164704256);
}

TEST_CASE("16-bit convolutions: padded stems, the weight gradient's copies and fp32 partials (CV6)") {
  // ResNet-18 bf16 (cuda-h200/tv_resnet18_b32_224_bf16.json.gz): conv1 7x7/2 3 -> 64 at b32 asked
  // 77,120,528 B forward = X·8/3 + Y + W·8/3 + 16 (3 channels staged as 8, overlapping or not)
  constexpr conv_op stem{.dims = 2, .out_channels = 64, .kernel = 7, .stride = 2, .padding = 3, .dilation = 1, .groups = 1};
  constexpr std::int64_t X = 32LL * 3 * 224 * 224 * 2, Y = 32LL * 64 * 112 * 112 * 2, W = 64 * 3 * 49 * 2;
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::bf16, 32 * 112 * 112, true) == 8);
  // fp16 pads a strided stem to 4 on a large map (resnet50_b16_224_fp16_foreach, H200 event 341:
  // 32,137,744 B = X·4/3 + Y + W·4/3 + 16 at b16 224²) and to 8 at ResNet-18 b2 96² (its weight
  // gradient asked 8,361,104 B, bf16's bytes); VGG16's stride-1 stem pads to 8 (CV6 d)
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::fp16, 16 * 112 * 112, true) == 4);
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::fp16, 2 * 48 * 48, true) == 8);
  // ResNet-18 fp16 b8 224² (H200 call 12): the forward pads to 4 (16,081,424 B), the weight gradient
  // to 8; at b2 224² both to 8
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::fp16, 8 * 112 * 112, false) == 4);
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::fp16, 8 * 112 * 112, true) == 8);
  CHECK(detail::cuda_staged_in_channels(stem, 3, dtype::fp16, 2 * 112 * 112, false) == 8);
  // VGG's stride-1 3-channel stem, padded, asks no forward copies (4 traces, CV6 e); strided stems,
  // and unpadded convs, do
  CHECK_FALSE(detail::cuda_forward_stages_copies(conv3x3, 3, 8, dtype::fp16));
  CHECK(detail::cuda_forward_stages_copies(stem, 3, 8, dtype::fp16));
  CHECK(detail::cuda_forward_stages_copies(conv3x3, 64, 64, dtype::bf16));
  // a small patch stem in 16 bits neither (ConvNeXt-T's 4×4/4 at bf16 b16-b64: 192 B, CV6 f); ViT's
  // 16×16/16 does, and fp32 keeps CV5's copies
  constexpr conv_op patch4{.dims = 2, .out_channels = 96, .kernel = 4, .stride = 4, .padding = 0, .dilation = 1, .groups = 1};
  constexpr conv_op patch16{.dims = 2, .out_channels = 768, .kernel = 16, .stride = 16, .padding = 0, .dilation = 1, .groups = 1};
  CHECK_FALSE(detail::cuda_forward_stages_copies(patch4, 3, 8, dtype::bf16));
  CHECK(detail::cuda_forward_stages_copies(patch16, 3, 8, dtype::bf16));
  CHECK(detail::cuda_forward_stages_copies(patch4, 3, 4, dtype::fp32));
  CHECK(detail::cuda_staged_in_channels(conv3x3, 3, dtype::fp16, 16 * 224 * 224, true) == 8);
  CHECK(detail::cuda_layout_workspace(stem, 49, 16LL * 4 * 224 * 224 * 2, 16LL * 64 * 112 * 112 * 2, 64 * 4 * 49 * 2) == 32137728);
  CHECK(detail::cuda_staged_in_channels(conv3x3, 64, dtype::bf16, 32 * 56 * 56, true) == 64);
  CHECK(detail::cuda_layout_workspace(stem, 49, X / 3 * 8, Y, W / 3 * 8) == 77120512);
  // the 16-bit weight gradient stages the forward's copies at any batch; fp32's X + Y from batch 8
  CHECK(detail::cuda_wgrad_copies(dtype::bf16, false, 368640, 368640, 147456, 147456) == 368640);
  CHECK(detail::cuda_wgrad_copies(dtype::fp32, false, 368640, 368640, 147456, 147456) == 0);
  CHECK(detail::cuda_wgrad_copies(dtype::fp32, true, 368640, 368640, 147456, 147456) == 2 * 147456);
  // partials: the padded stem at b2 96² (K = 4,608): 72 fp32 staged weights (100,352 B each;
  // measured 74: 8,361,104 B = copies + 7,426,048 + 144)
  CHECK(detail::cuda_wgrad_partials(stem, 49, 18816, 4608, 2, dtype::bf16, 3, 8) == 72 * 100352);
  // an aligned 3x3 64 -> 64: none at K = 1,152 (b2 96²); 13 fp32 weights at K = 100,352 (b32
  // 224²: 27,681,447 B = X + Y + W + 13·147,456 + 679), and 13 at K = 50,176 to 802,816
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 73728, 1152, 2, dtype::bf16, 64, 64) == 0);
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 73728, 100352, 32, dtype::bf16, 64, 64) == 13 * 147456);
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 73728, 802816, 16, dtype::fp16, 64, 64) == 13 * 147456);
  // fp32 keeps CV2 on W (K = 1,152: 18 chunks)
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 147456, 1152, 2, dtype::fp32, 64, 64) == 18 * 147456);
}

TEST_CASE("16-bit split-K partials: an envelope of what cuDNN was seen to take (CV6 c)") {
  constexpr conv_op conv3x3_256{.dims = 2, .out_channels = 256, .kernel = 3, .stride = 1, .padding = 1, .dilation = 1, .groups = 1};
  constexpr conv_op down{.dims = 2, .out_channels = 128, .kernel = 1, .stride = 2, .padding = 0, .dilation = 1, .groups = 1};
  // a 3x3 splits from K = 25,088: none at 12,544 (ResNet-18 bf16 b16's layer2, b64's layer3)
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 294912, 12544, 16, dtype::bf16, 128, 128) == 0);
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 294912, 25088, 32, dtype::bf16, 128, 128) == 13 * 589824);
  // a wide weight: as many as fit the largest traced, VGG16 fp16 b16's 256 -> 256 at 56²
  // (K = 50,176: 69,075,623 B = X + Y + W + 7·2,359,296 + 611)
  CHECK(detail::cuda_wgrad_partials(conv3x3_256, 9, 1179648, 50176, 16, dtype::fp16, 256, 256) == 7 * 2359296);
  // ResNet-18 layer4's 512 -> 512 (9.4 MB fp32) at b64 (K = 3,136): none, as traced; one fits the
  // largest traced, so from K = 25,088 (b512, not traced) one
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 4718592, 3136, 64, dtype::bf16, 512, 512) == 0);
  CHECK(detail::cuda_wgrad_partials(conv3x3, 9, 4718592, 25088, 512, dtype::bf16, 512, 512) == 9437184);
  // a strided 1x1 64 -> 128: from K = 6,272, up to 3.75 MiB (b64, K = 50,176: 117 of 32,768 B
  // measured, 120 fit); 0 below (ResNet-18 bf16 b16/b32's 128 -> 256 at K = 3,136 and 6,272 took
  // none, b128's 256 -> 512 at 6,272 took 7: the threshold is the lower one)
  CHECK(detail::cuda_wgrad_partials(down, 1, 16384, 50176, 64, dtype::bf16, 64, 64) == 120 * 32768);
  CHECK(detail::cuda_wgrad_partials(down, 1, 16384, 3136, 16, dtype::bf16, 64, 64) == 0);
  // a stride-1 1x1 keeps CV1's 2·W in 16 bits too
  constexpr conv_op pointwise{.dims = 2, .out_channels = 128, .kernel = 1, .stride = 1, .padding = 0, .dilation = 1, .groups = 1};
  CHECK(detail::cuda_wgrad_partials(pointwise, 1, 16384, 50176, 64, dtype::bf16, 64, 64) == 2 * 16384);
}

TEST_CASE("a 16-bit stem's weight gradient asks padded copies and fp32 partials (CV6)") {
  // ResNet-18's conv1 alone under AMP bf16 at b2 96² (resnet18_b2_96_bf16's peak): its weight
  // gradient asks X·8/3 + Y + W·8/3 + 72 fp32 staged weights = 8,160,256 B (measured 8,361,104);
  // before CV6 the walk asked 72 bf16 unpadded weights (1,354,752) and its peak was 6.6 MB
  const auto net = sequential(input(3, 96, 96), conv2d(64, 7, stride(2), padding(3)));
  const auto b = budget_totals(net, training{.batch = 2, .precision = amp_bf16, .model_allocator = true}, devices::h100_80gb);
  REQUIRE(b.allocator_modelled);
  constexpr std::int64_t X = 2 * 3 * 96 * 96 * 2, Y = 2 * 64 * 48 * 48 * 2, W = 64 * 3 * 49 * 2;
  CHECK(b.allocated_fwd_bwd_peak >= X / 3 * 8 + Y + W / 3 * 8 + 72 * 100352);
}
