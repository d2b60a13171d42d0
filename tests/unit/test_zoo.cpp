// The model zoo (issue #3): every model's parameter count pinned to its published figure
// (torchvision 0.14 / Hugging Face configs), one shape-level fact per family, and the memory
// rules of the ops the zoo added (benchmarks/accuracy/zoo_op_probe.py, op_rules.md §7).
//
// The budgets are computed at run time (budget_totals is constexpr but need not be): a
// constant evaluation of every model would cost minutes of compile time and exceed Clang's
// 1M-step constexpr limit for the large ones.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/gpt.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

namespace {

template <std::size_t N>
std::int64_t params_of(const model<N>& m) {
  return budget_totals(m, training{.batch = 1}, devices::a100_80gb).parameter_count;
}

/// Output shape of the record named `name` (the whole model's output for nullptr).
template <std::size_t N>
std::string shape_of(const model<N>& m, const char* name = nullptr, training plan = training{.batch = 1}) {
  const auto b = budget(m, plan, devices::a100_80gb);
  if (!name) return to_string(b.per_record[0].output);
  for (std::size_t i = 0; i < N; ++i)
    if (b.records[i].name && std::string_view(b.records[i].name) == name) return to_string(b.per_record[i].output);
  return "<no record named " + std::string(name) + ">";
}

}  // namespace

// Compile-time facts of the zoo's helpers (cheap: no model is simulated here).
static_assert(models::detail::make_divisible(72 / 4) == 24);   // MobileNetV3's SE squeeze for 72 channels
static_assert(models::detail::make_divisible(120 / 4) == 32);
static_assert(models::detail::make_divisible(960 / 4) == 240);
static_assert(detail::relative_position_table(7, 3) == 169 * 3);  // Swin-T stage 1
static_assert(models::swin_t().records[0].kind == node_kind::sequence);

// Every added op also works in constant evaluation (tiny models: cheap to evaluate).
namespace {
constexpr auto tiny_mobile = sequential(input(16, 14, 14), conv2d(32, 1, no_bias), batch_norm(), relu6_inplace(), hardswish_inplace(),
                                        squeeze_excitation(8, se_activation::silu_inplace, se_gate::sigmoid), silu_inplace(),
                                        hardsigmoid(), relu6(), dropout_inplace(20));
static_assert(budget_totals(tiny_mobile, training{.batch = 2}, devices::a100_80gb).parameter_count == 16 * 32 + 64 + (32 * 8 + 8) + (8 * 32 + 32));
constexpr auto tiny_swin = sequential(input(14, 14, 32), window_attention(heads(2), 7, 3), patch_merging());
static_assert(budget_totals(tiny_swin, training{.batch = 2}, devices::a100_80gb).parameter_count ==
              (32 * 96 + 96) + (32 * 32 + 32) + 169 * 2 + 2 * 128 + 128 * 64);
constexpr models::llama_config tiny_llama{256, 64, 2, 4, 2, 176, 32, 16, false};
static_assert(budget_totals(models::llama(tiny_llama), training{.batch = 2}, devices::a100_80gb).parameter_count ==
              2 * 256 * 64 + 64 + 2 * (2 * 64 + 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 176));
constexpr models::bert_config tiny_bert{100, 32, 2, 64, 2, 4, 128, 10, 16, true};
static_assert(budget_totals(models::bert(tiny_bert), training{.batch = 2}, devices::a100_80gb).parameter_count ==
              (100 + 32 + 2) * 64 + 2 * 64 + 2 * (4 * (64 * 64 + 64) + 4 * 64 + (64 * 128 + 128) + (128 * 64 + 64)) + 64 * 64 + 64);
}  // namespace

TEST_CASE("torchvision ResNets: published parameter counts", "[zoo][torchvision]") {
  CHECK(params_of(models::resnet18()) == 11'689'512);
  CHECK(params_of(models::resnet34()) == 21'797'672);
  CHECK(params_of(models::resnet50()) == 25'557'032);
  CHECK(params_of(models::resnet101()) == 44'549'160);
  CHECK(params_of(models::resnet152()) == 60'192'808);
  CHECK(params_of(models::wide_resnet50_2()) == 68'883'240);
  CHECK(shape_of(models::resnet50(224, 10)) == "[10]");
}

TEST_CASE("torchvision VGG: published parameter counts", "[zoo][torchvision]") {
  CHECK(params_of(models::vgg11()) == 132'863'336);
  CHECK(params_of(models::vgg11_bn()) == 132'868'840);
  CHECK(params_of(models::vgg16()) == 138'357'544);
  CHECK(params_of(models::vgg16_bn()) == 138'365'992);
  CHECK(shape_of(models::vgg16(), "features") == "[512,7,7]");
  // the classifier sees 512·7·7 whatever the image size (AdaptiveAvgPool2d((7, 7)))
  CHECK(params_of(models::vgg11(64, 1000)) == 132'863'336);
}

TEST_CASE("torchvision mobile networks: published parameter counts", "[zoo][torchvision]") {
  CHECK(params_of(models::mobilenet_v2()) == 3'504'872);
  CHECK(params_of(models::mobilenet_v3_large()) == 5'483'032);
  CHECK(params_of(models::efficientnet_b0()) == 5'288'548);
  CHECK(shape_of(models::mobilenet_v2(), "features") == "[1280,7,7]");
  CHECK(shape_of(models::mobilenet_v3_large(), "features") == "[960,7,7]");
  CHECK(shape_of(models::efficientnet_b0(), "features") == "[1280,7,7]");
}

TEST_CASE("torchvision DenseNet-121: published parameter count", "[zoo][torchvision]") {
  CHECK(params_of(models::densenet121()) == 7'978'856);
  CHECK(shape_of(models::densenet121(), "features") == "[1024,7,7]");  // 512 + 16·32 after norm5
}

TEST_CASE("torchvision ConvNeXt, ViT and Swin: published parameter counts", "[zoo][torchvision]") {
  CHECK(params_of(models::convnext_tiny()) == 28'589'128);
  CHECK(params_of(models::convnext_small()) == 50'223'688);
  CHECK(params_of(models::vit_b_16()) == 86'567'656);
  CHECK(params_of(models::vit_l_16()) == 304'326'632);
  CHECK(params_of(models::swin_t()) == 28'288'354);
  CHECK(shape_of(models::convnext_tiny(), "features") == "[768,7,7]");
  CHECK(shape_of(models::vit_b_16(384, 10)) == "[10]");
  CHECK(shape_of(models::swin_t()) == "[1000]");
  CHECK(shape_of(models::swin_t(), "features") == "[7,7,768]");
  // 256²: stage maps 64, 32, 16, 8 are padded to multiples of the 7×7 window (no new parameters)
  CHECK(shape_of(models::swin_t(256, 10)) == "[10]");
  CHECK(params_of(models::swin_t(256, 1000)) == 28'288'354);
}

TEST_CASE("BERT-base and GPT-2: published parameter counts", "[zoo][transformers]") {
  CHECK(params_of(models::bert(models::bert_base())) == 109'482'240);
  CHECK(params_of(models::bert_encoder(models::bert_base())) == 109'482'240 - (768 * 768 + 768));  // without the pooler
  CHECK(shape_of(models::bert(models::bert_base(128))) == "[768]");
  CHECK(shape_of(models::bert_encoder(models::bert_base(128))) == "[128,768]");

  CHECK(params_of(models::gpt(models::gpt2_small())) == 124'439'808);
  CHECK(params_of(models::gpt(models::gpt2_medium())) == 354'823'168);
  CHECK(params_of(models::gpt(models::gpt2_large())) == 774'030'080);
  CHECK(params_of(models::gpt(models::gpt2_xl())) == 1'557'611'200);
  CHECK(shape_of(models::gpt(models::gpt2_small(256))) == "[256,50257]");
}

TEST_CASE("Llama-style decoders: published parameter counts", "[zoo][transformers]") {
  CHECK(params_of(models::llama(models::llama2_7b())) == 6'738'415'616);
  CHECK(params_of(models::llama(models::llama2_13b())) == 13'015'864'320);
  CHECK(params_of(models::llama(models::llama2_70b())) == 68'976'648'192);
  CHECK(params_of(models::llama(models::llama3_8b())) == 8'030'261'248);
  CHECK(params_of(models::llama(models::mistral_7b())) == 7'241'732'096);
  CHECK(shape_of(models::llama(models::llama3_8b(2048))) == "[2048,128256]");
  // the sequence length is a budget parameter: it changes activations, not parameters
  CHECK(params_of(models::llama(models::llama2_7b(512))) == 6'738'415'616);
  CHECK_THROWS(models::llama(models::llama2_7b(8192)));  // beyond the 4096-token context
}

TEST_CASE("grouped-query attention: q/o are D×D, k/v D×(kv_heads·head_dim)", "[zoo][attention]") {
  const auto gqa = sequential(input(16, 4096), attention(4096, heads(32), attention_impl::flash, kv_heads(8), no_bias, rotary));
  CHECK(params_of(gqa) == 2 * 4096 * 4096 + 2 * 4096 * 1024);
  const auto mha = sequential(input(16, 4096), attention(4096, heads(32), attention_impl::flash, no_bias, rotary));
  CHECK(params_of(mha) == 4 * 4096 * 4096);
  // rotary is implemented for the flash path only
  CHECK_THROWS(params_of(sequential(input(16, 64), attention(64, heads(4), attention_impl::split_qkv, rotary))));
}

// --- memory rules of the added ops (what autograd keeps; op_rules.md §7) -------------------------

namespace {
template <std::size_t N>
std::int64_t saved_of(const model<N>& m, std::int64_t batch) {
  return budget_totals(m, training{.batch = batch}, devices::a100_80gb).saved_activations;
}
}  // namespace

TEST_CASE("in-place ReLU6 / Hardswish / SiLU keep an input-sized clone; in-place ReLU does not", "[zoo][rules]") {
  // BN keeps its input x and 4 per-channel vectors; the activation after it:
  constexpr std::int64_t X = 2 * 32 * 32 * 32 * 4, stats = 4 * 32 * 4;
  CHECK(saved_of(sequential(input(32, 32, 32), batch_norm(), relu_inplace()), 2) == X + stats + X);  // the shared result
  CHECK(saved_of(sequential(input(32, 32, 32), batch_norm(), relu6_inplace()), 2) == X + stats + X);  // a new clone
  CHECK(saved_of(sequential(input(32, 32, 32), batch_norm(), hardswish()), 2) == X + stats + X);      // BN's output
  CHECK(saved_of(sequential(input(32, 32, 32), batch_norm(), silu_inplace()), 2) == X + stats + X);
  CHECK(saved_of(sequential(input(32, 32, 32), batch_norm(), dropout_inplace(20)), 2) == X + stats + X);  // the noise
  CHECK(saved_of(sequential(input(32, 32, 32), batch_norm(), dropout_inplace(0)), 2) == X + stats);
  // what separates the in-place forms: no new output tensor
  const auto inplace = budget_totals(sequential(input(32, 32, 32), batch_norm(), relu6_inplace()), training{.batch = 2}, devices::a100_80gb);
  const auto outofplace = budget_totals(sequential(input(32, 32, 32), batch_norm(), relu6()), training{.batch = 2}, devices::a100_80gb);
  CHECK(inplace.after_forward == outofplace.after_forward);  // clone + aliased output = input + new output
}

TEST_CASE("squeeze-excitation keeps the feature map and the small gate tensors", "[zoo][rules]") {
  // zoo_op_probe.py bn_se_hardsigmoid: x[2,32,32,32] → besides BN's input, statistics and
  // output, the SE keeps four small tensors: the pooled [32,1,1] (fc1's input), the ReLU's
  // output [8,1,1], the gate's input and the gate's output (the product's operand)
  constexpr std::int64_t X = 2 * 32 * 32 * 32 * 4, stats = 4 * 32 * 4;
  const auto se = sequential(input(32, 32, 32), batch_norm(), squeeze_excitation(8, se_activation::relu, se_gate::hardsigmoid));
  const auto small = 2 * 32 * 4 /*pooled*/ + 2 * 8 * 4 /*relu out*/ + 2 * 32 * 4 /*fc2 out*/ + 2 * 32 * 4 /*gate*/;
  CHECK(saved_of(se, 2) == X + stats + X + small);
  CHECK(params_of(se) == 2 * 32 + (32 * 8 + 8) + (8 * 32 + 32));
}

TEST_CASE("RMSNorm keeps its input and the normalized tensor (1.13: and the square); SwiGLU x + 4 hidden", "[zoo][rules]") {
  // zoo_op_probe.py rms_norm: x[4,64,256] keeps x + h (2·256K) + rsqrt [256 rows] in PyTorch 2.x
  // (op_rules.md 2.6 #6: mean(dim) keeps nothing, so the pow output is not kept); x comes out of
  // a Linear (which keeps the input batch) so that it needs a gradient
  constexpr std::int64_t X = 4 * 64 * 256 * 4;
  CHECK(saved_of(sequential(input(64, 256), linear(256), rms_norm()), 4) == X + 2 * X + 4 * 64 * 4);
  // on the input batch itself only the weight's product keeps h
  CHECK(saved_of(sequential(input(64, 256), rms_norm()), 4) == X);
  // zoo_op_probe.py swiglu: x + gate + silu + up + product (hidden 512)
  CHECK(saved_of(sequential(input(64, 256), swiglu(512, 256)), 4) == X + 4 * (2 * X));
}

TEST_CASE("Swin window attention: parameters and the index buffer", "[zoo][rules]") {
  const auto wa = sequential(input(56, 56, 96), window_attention(heads(3), 7, 3));
  const auto b = budget_totals(wa, training{.batch = 1}, devices::a100_80gb);
  CHECK(b.parameter_count == (96 * 288 + 288) + (96 * 96 + 96) + 169 * 3);
  CHECK(b.buffers == 49 * 49 * 8);  // relative_position_index (int64)
  const auto pm = sequential(input(56, 56, 96), patch_merging());
  CHECK(params_of(pm) == 2 * 384 + 384 * 192);
  CHECK(shape_of(pm) == "[28,28,192]");
}

TEST_CASE("Video Swin window attention: a 3-D window that shrinks to a short clip", "[zoo][rules]") {
  // torchvision's ShiftedWindowAttention3d(96, [8, 7, 7], [4, 3, 3], 3): 44,853 parameters (sum(p.numel()),
  // PyTorch 2.6), its relative_position_index 392² = 153,664 int64 entries
  const auto wa = sequential(input(4, 16, 16, 96), window_attention_3d(heads(3), 8, 7, 4, 3));
  const auto b = budget(wa, training{.batch = 1}, devices::a100_80gb);
  CHECK(b.parameter_count == 44853);
  CHECK(b.buffers == 153664 * 8);
  // 4 frames: the window shrinks to (4, 7, 7), unshifted in time; 16² pads to 21², shifted: 9 windows
  // of 196 tokens, whose masked scores [9, 3, 196, 196] and the shrunk window's index copy (196² int64,
  // kept by the gather) a 2-D (7, 7) window on one frame would not have
  CHECK(b.per_record[2].output == make_shape(4, 16, 16, 96));
  const auto one_frame = budget(sequential(input(16, 16, 96), window_attention(heads(3), 7, 3)), training{.batch = 1}, devices::a100_80gb);
  CHECK(b.saved_activations > 4 * one_frame.saved_activations);
  CHECK_THROWS_WITH(budget(sequential(input(16, 16, 96), window_attention_3d(heads(3), 8, 7, 4, 3)), training{.batch = 1}, devices::a100_80gb),
                    Catch::Contains("rank"));
}

TEST_CASE("Swin V2 window attention: cosine attention and the continuous position bias", "[zoo][rules]") {
  // torchvision's ShiftedWindowAttentionV2(96, [8, 8], [4, 4], 3): 40,323 parameters (sum(p.numel()),
  // PyTorch 2.6): qkv, proj, the logit scale [3, 1, 1] and cpb_mlp, Linear(2, 512) and Linear(512, 3, bias=False)
  const auto wa = sequential(input(16, 16, 96), window_attention_v2(heads(3), 8, 4));
  const auto b = budget_totals(wa, training{.batch = 1}, devices::a100_80gb);
  CHECK(b.parameter_count == 40323);
  CHECK(b.buffers == 64 * 64 * 8 + 15 * 15 * 2 * 4);  // relative_position_index, relative_coords_table
  // what V2 keeps beyond V1 on the same windows (4 windows of 64 tokens, 3 heads of 32): qkv itself
  // (normalize keeps q and k, views of it), the two norms and their clamps (4 x [4, 3, 64, 1]), the
  // unscaled scores [4, 3, 64, 64] (the logit scale's product keeps them), cpb_mlp's hidden layer
  // [225, 512], the sigmoid [3, 64, 64], the logit scale [3] and the coordinates [225, 2]; V1 keeps
  // q's scaled copy instead of q's normalized one (the same size) and no table of its own
  const auto v1 = budget_totals(sequential(input(16, 16, 96), window_attention(heads(3), 8, 4)), training{.batch = 1}, devices::a100_80gb);
  CHECK(b.saved_activations - v1.saved_activations ==
        4 * 64 * 288 * 4 + 4 * (4 * 3 * 64 * 4) + 4 * 3 * 64 * 64 * 4 + 225 * 512 * 4 + 3 * 64 * 64 * 4 + 3 * 4 + 225 * 2 * 4);
  // PatchMergingV2(96): Linear(384, 192, bias=False), then LayerNorm(192)
  const auto pm = sequential(input(16, 16, 96), patch_merging_v2());
  CHECK(params_of(pm) == 74112);
  CHECK(shape_of(pm) == "[8,8,192]");
}
