// PyTorch module paths inside repeated blocks (issue C #13): training::train_only selects
// `layer4.2.conv3` of torchvision's resnet50 although the model stores layer4's blocks 1 and 2
// once, as one repeat. Parameter counts are torchvision's (sum of p.numel() over the module's
// parameters); every expected number below is derived by hand in the comment above it.
#include <catch2/catch.hpp>
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/models/transformers.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace {
using namespace gpubudget;

constexpr device dev = custom_device("unit", 80 * GiB);

memory_budget trained(const char* names, std::int64_t batch = 2) {
  training t{};
  t.batch = batch;
  t.optimizer = sgd;
  t.train_only = names;
  static const auto m = models::resnet50();
  return budget_totals(m, t, dev);
}

std::string error_of(const char* names) {
  try {
    trained(names);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

// layer4.2.conv3 = Conv2d(512, 2048, 1, bias=False): 512·2048 = 1,048,576 weights.
TEST_CASE("a module inside a repeated block trains alone", "[names]") {
  CHECK(trained("layer4.2.conv3").trainable_count == 1'048'576);
  // layer4.2.bn3 = BatchNorm2d(2048): weight and bias
  CHECK(trained("layer4.2.bn3").trainable_count == 4'096);
  // layer4.0's downsample = Conv2d(1024, 2048, 1, stride 2, no bias) + BatchNorm2d(2048)
  CHECK(trained("layer4.0.downsample").trainable_count == 2'097'152 + 4'096);
  CHECK(trained("layer4.0.downsample.0").trainable_count == 2'097'152);
}

// A Bottleneck(2048 -> 512 -> 2048): conv1 2048·512 = 1,048,576, conv2 512·512·9 = 2,359,296,
// conv3 1,048,576, bn1 + bn2 2·1,024, bn3 4,096: 4,462,592. layer4 = layer4.0 (6,039,552, with
// its downsample; CLI test freeze_all_but_resnet_block) + 2 such blocks = 14,964,736.
TEST_CASE("one copy of a repeated block vs the whole stage", "[names]") {
  const auto block = trained("layer4.2");
  const auto stage = trained("layer4");
  CHECK(block.trainable_count == 4'462'592);
  CHECK(trained("layer4.1").trainable_count == 4'462'592);
  CHECK(stage.trainable_count == 14'964'736);
  CHECK(trained("layer4.1,layer4.2").trainable_count == 2 * 4'462'592);
  // as in PyTorch, no gradient flows into layer4.0 and 4.1 when only 4.2 trains: they save
  // nothing for backward, so training one block keeps less than training the stage
  CHECK(block.saved_activations < stage.saved_activations);
  CHECK(block.step_peak < stage.step_peak);
  // every copy named one by one is the whole repeat: the copy-by-copy walk agrees with the
  // walk that stands in for the middle copies
  const auto layer3 = trained("layer3,fc");
  const auto each = trained("layer3.0,layer3.1,layer3.2,layer3.3,layer3.4,layer3.5,fc");
  CHECK(each.trainable_count == layer3.trainable_count);
  CHECK(each.saved_activations == layer3.saved_activations);
  CHECK(each.step_peak == layer3.step_peak);
}

// A copy number is a whole component: in resnet152 (layer3 has 36 blocks) `layer3.2` is one
// Bottleneck(1024 -> 256 -> 1024): 262,144 + 589,824 + 262,144 + 512 + 512 + 2,048 = 1,117,184,
// not layer3.20 .. layer3.29 as well.
TEST_CASE("a copy number is not a prefix of a longer one", "[names]") {
  training t{};
  t.batch = 1;
  t.train_only = "layer3.2";
  static const auto m = models::resnet152();
  CHECK(budget_totals(m, t, dev).trainable_count == 1'117'184);
  t.train_only = "layer3.35";
  CHECK(budget_totals(m, t, dev).trainable_count == 1'117'184);
}

TEST_CASE("a copy out of range or an unknown module is an error", "[names]") {
  const std::string expected = "gpubudget: a train_only prefix matches no record name (or is empty); check the model's named(...) blocks";
  CHECK(error_of("layer4.3") == expected);     // resnet50's layer4 has blocks 0..2
  CHECK(error_of("layer4.2.conv4") == expected);
  CHECK(error_of("layer4.02") == expected);    // no such module name in PyTorch
  CHECK(error_of("layer4.2conv3") == expected);
  CHECK(error_of("layer4.2.") == "no error");  // a prefix of layer4.2.conv1 ...
}

// LlamaDecoderLayer of Llama-2-7B: q, k, v, o 4·4096² = 67,108,864, gate/up/down 3·4096·11008
// = 135,266,304, two RMSNorms 2·4096: 202,383,360. lm_head 32000·4096 = 131,072,000.
TEST_CASE("Llama's decoder layers by number", "[names]") {
  const auto m = models::llama(models::llama2_7b(16));
  training t{};
  t.batch = 1;
  t.precision = amp_bf16;
  t.train_only = "model.layers.31";
  CHECK(budget_totals(m, t, dev).trainable_count == 202'383'360);
  t.train_only = "model.layers.31.mlp.down_proj";
  CHECK(budget_totals(m, t, dev).trainable_count == 4096 * 11008);
  t.train_only = "lm_head";
  CHECK(budget_totals(m, t, dev).trainable_count == 131'072'000);
  t.train_only = "model.layers.32";
  CHECK_THROWS_AS(budget_totals(m, t, dev), std::invalid_argument);
}

// The per-block table prints a repeated block's copies collapsed in one row, numbered as PyTorch
// numbers them; module_names() lists every path the names may select.
TEST_CASE("tables and listings print the module paths", "[names][report]") {
  const auto m = models::llama(models::llama2_7b(16));
  const auto table = layer_table(budget(m, training{}, dev));
  CHECK_THAT(table, Catch::Contains("| model.layers.{0..31} |"));
  CHECK_THAT(table, Catch::Contains("| lm_head |"));
  const auto names = module_names(m);
  const auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  CHECK(has("model.layers.{0..31}.self_attn"));
  CHECK(has("model.layers.{0..31}.mlp.down_proj"));
  CHECK(names_a_module(m, "model.layers.31.self_attn"));
  CHECK(!names_a_module(m, "model.layers.32"));
  const auto resnet = module_names(models::resnet50());
  CHECK(std::find(resnet.begin(), resnet.end(), "layer4.{1..2}.conv3") != resnet.end());
  CHECK(std::find(resnet.begin(), resnet.end(), "layer4.0.downsample.0") != resnet.end());
  const auto vit = module_names(models::vit_b_16());
  CHECK(std::find(vit.begin(), vit.end(), "encoder.layers.encoder_layer_{0..11}.mlp.3") != vit.end());
  CHECK(names_a_module(models::vit_b_16(), "encoder.layers.encoder_layer_11.self_attention"));
  // ConvNeXt stage 1: block 0 apart, blocks 1..2 one repeat numbered from 1; block.3 =
  // Linear(96, 384): 96·384 + 384 = 37,248
  training t{};
  t.batch = 1;
  t.train_only = "features.1.2.block.3";
  static const auto convnext = models::convnext_tiny();
  CHECK(budget_totals(convnext, t, dev).trainable_count == 37'248);
  t.train_only = "features.1.0.block.3,features.1.1.block.3";
  CHECK(budget_totals(convnext, t, dev).trainable_count == 2 * 37'248);
  // VGG16's features.28 (stage 5's third Conv2d(512, 512, 3): 512·512·9 + 512 = 2,359,808) lies in
  // the stage's repeat of (conv, ReLU) pairs; classifier.6 = Linear(4096, 1000)
  static const auto vgg = models::vgg16();
  t.train_only = "features.28";
  CHECK(budget_totals(vgg, t, dev).trainable_count == 2'359'808);
  t.train_only = "features.29";  // its ReLU
  CHECK(budget_totals(vgg, t, dev).trainable_count == 0);
  t.train_only = "classifier.6";
  CHECK(budget_totals(vgg, t, dev).trainable_count == 4'097'000);
  CHECK(!names_a_module(vgg, "features.31"));  // features.30 is the last pooling
  CHECK(names_a_module(vgg, "features.30"));
  // numbered features of the mobile nets: MobileNetV2's features.18 = Conv2d(320, 1280, 1) +
  // BatchNorm2d(1280); EfficientNet-B0's features.2.1 is stage 2's second MBConv; DenseNet's
  // norm5 = BatchNorm2d(1024)
  t.train_only = "features.18";
  CHECK(budget_totals(models::mobilenet_v2(), t, dev).trainable_count == 320 * 1280 + 2 * 1280);
  CHECK(names_a_module(models::mobilenet_v2(), "features.10"));
  CHECK(!names_a_module(models::mobilenet_v2(), "features.19"));
  CHECK(names_a_module(models::mobilenet_v3_large(), "features.15"));
  CHECK(!names_a_module(models::mobilenet_v3_large(), "features.17"));
  CHECK(names_a_module(models::efficientnet_b0(), "features.2.1"));
  CHECK(!names_a_module(models::efficientnet_b0(), "features.2.2"));
  t.train_only = "features.norm5";
  CHECK(budget_totals(models::densenet121(), t, dev).trainable_count == 2 * 1024);
  // BERT-base's encoder.layer.11.intermediate.dense = Linear(768, 3072); torchvision ViT-B/16's
  // encoder_layer_11 = ln_1, ln_2 2·1,536, in_proj 768·2304 + 2304, out_proj 768·768 + 768, mlp
  // 768·3072 + 3072 + 3072·768 + 768: 7,087,872
  t.train_only = "encoder.layer.11.intermediate.dense";
  CHECK(budget_totals(models::bert(models::bert_base(16)), t, dev).trainable_count == 768 * 3072 + 3072);
  t.train_only = "encoder.layers.encoder_layer_11";
  static const auto vit_b = models::vit_b_16();
  CHECK(budget_totals(vit_b, t, dev).trainable_count == 7'087'872);
  t.train_only = "encoder_layer_1";  // copy 1 only, not 10 and 11
  CHECK(budget_totals(vit_b, t, dev).trainable_count == 7'087'872);
  // Swin repeats its blocks in pairs: blocks 0..1 of features.3 are copy 0
  CHECK(names_a_module(models::swin_t(), "features.5.5.attn"));
  CHECK(!names_a_module(models::swin_t(), "features.5.6"));
}

// Checkpointed copies re-run in backward with the copy they ran in forward: naming every copy
// one by one gives the budget naming the repeat gives. GPT-2 small's block: ln_1 + ln_2 2·1,536,
// attn 768·2304 + 2304 + 768·768 + 768, mlp 768·3072 + 3072 + 3072·768 + 768: 7,087,872.
TEST_CASE("named copies of checkpointed blocks", "[names][checkpoint]") {
  auto g = models::gpt2_small(64);
  g.checkpoint_blocks = true;
  const auto m = models::gpt(g);
  training t{};
  t.batch = 2;
  t.train_only = "transformer.h";
  const auto whole = budget_totals(m, t, dev);
  t.train_only = "transformer.h.0,transformer.h.1,transformer.h.2,transformer.h.3,transformer.h.4,transformer.h.5,"
                 "transformer.h.6,transformer.h.7,transformer.h.8,transformer.h.9,transformer.h.10,transformer.h.11";
  const auto each = budget_totals(m, t, dev);
  CHECK(each.trainable_count == whole.trainable_count);
  CHECK(each.step_peak == whole.step_peak);
  t.train_only = "transformer.h.11";
  const auto last = budget_totals(m, t, dev);
  CHECK(last.trainable_count == 7'087'872);
  CHECK(last.step_peak < whole.step_peak);
  t.train_only = "transformer.h.11.mlp.c_fc";
  CHECK(budget_totals(m, t, dev).trainable_count == 768 * 3072 + 3072);
}
