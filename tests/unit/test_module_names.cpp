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
  // an unnamed block is labelled by the modules it holds (resnet50's stem and head)
  const auto resnet_table = layer_table(budget(models::resnet50(), training{}, dev));
  CHECK_THAT(resnet_table, Catch::Contains("| conv1, bn1, relu, maxpool |"));
  CHECK_THAT(resnet_table, Catch::Contains("| layer3 |"));
  CHECK_THAT(resnet_table, Catch::Contains("| avgpool, fc |"));
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

// One projection inside an attention op (its parts: projection_names). Llama-2-7B's q_proj is
// Linear(4096, 4096, bias=False): 16,777,216 weights; Llama-3-8B's k_proj Linear(4096, 1024)
// (8 key-value heads of 128 channels): 4,194,304.
TEST_CASE("one projection of an attention trains alone", "[names][parts]") {
  static const auto llama2 = models::llama(models::llama2_7b(16));
  training t{};
  t.batch = 1;
  t.precision = amp_bf16;
  t.train_only = "model.layers.31.self_attn.q_proj";
  const auto q_only = budget_totals(llama2, t, dev);
  CHECK(q_only.trainable_count == 4096 * 4096);
  t.train_only = "model.layers.31.self_attn";
  const auto whole = budget_totals(llama2, t, dev);
  CHECK(whole.trainable_count == 4 * 4096 * 4096);
  // the frozen k, v and o save nothing for their weights (their inputs need no gradient)
  CHECK(q_only.saved_activations <= whole.saved_activations);
  CHECK(q_only.saved_activations < whole.saved_activations);
  // every part named is the whole attention
  t.train_only = "model.layers.31.self_attn.q_proj,model.layers.31.self_attn.k_proj,model.layers.31.self_attn.v_proj,"
                 "model.layers.31.self_attn.o_proj";
  const auto parts = budget_totals(llama2, t, dev);
  CHECK(parts.trainable_count == whole.trainable_count);
  CHECK(parts.saved_activations == whole.saved_activations);
  CHECK(parts.step_peak == whole.step_peak);
  static const auto llama3 = models::llama(models::llama3_8b(16));
  t.train_only = "model.layers.31.self_attn.k_proj";
  CHECK(budget_totals(llama3, t, dev).trainable_count == 4096 * 1024);
  t.train_only = "model.layers.0.self_attn.o_proj";
  CHECK(budget_totals(llama3, t, dev).trainable_count == 4096 * 4096);
  // Phi-3-mini's fused qkv_proj = Linear(3072, 3 · 3072) (modeling_phi3.py); it has no q_proj
  static const auto phi3 = models::phi3(models::phi3_mini(16));
  t.train_only = "model.layers.31.self_attn.qkv_proj";
  CHECK(budget_totals(phi3, t, dev).trainable_count == 3072 * 9216);
  t.train_only = "model.layers.31.self_attn.q_proj";
  CHECK_THROWS_AS(budget_totals(phi3, t, dev), std::invalid_argument);
}

// PEFT's default LoRA targets for Llama (q_proj, v_proj) name the base weights they adapt:
// 32 layers x (4096·4096 + 4096·4096) = 1,073,741,824 for Llama-2-7B, the count freezing all
// but those names trains. A bare part name selects it in every layer (PEFT's target_modules).
TEST_CASE("q_proj and v_proj of every layer", "[names][parts]") {
  static const auto llama2 = models::llama(models::llama2_7b(16));
  training t{};
  t.batch = 1;
  t.train_only = "q_proj,v_proj";
  CHECK(budget_totals(llama2, t, dev).trainable_count == 32LL * 2 * 4096 * 4096);
  t.train_only = "model.layers.31.self_attn.v_proj";
  CHECK(budget_totals(llama2, t, dev).trainable_count == 4096 * 4096);
}

// GPT-2 small: c_attn = Conv1D(768, 2304) with bias (q, k and v), c_proj = Conv1D(768, 768);
// BERT-base: attention.self.query = Linear(768, 768), attention.output.dense = Linear(768, 768);
// torchvision ViT-B/16: self_attention.out_proj = NonDynamicallyQuantizableLinear(768, 768), its
// q, k, v being one parameter (in_proj_weight) that no module name selects apart.
TEST_CASE("projections of GPT-2, BERT and ViT", "[names][parts]") {
  training t{};
  t.batch = 1;
  static const auto gpt2 = models::gpt(models::gpt2_small(64));
  t.train_only = "transformer.h.11.attn.c_attn";
  CHECK(budget_totals(gpt2, t, dev).trainable_count == 768 * 2304 + 2304);
  t.train_only = "transformer.h.11.attn.c_proj";
  CHECK(budget_totals(gpt2, t, dev).trainable_count == 768 * 768 + 768);
  static const auto bert = models::bert(models::bert_base(16));
  t.train_only = "encoder.layer.3.attention.self.query";
  CHECK(budget_totals(bert, t, dev).trainable_count == 768 * 768 + 768);
  t.train_only = "encoder.layer.3.attention.self";  // query, key, value
  CHECK(budget_totals(bert, t, dev).trainable_count == 3 * (768 * 768 + 768));
  t.train_only = "encoder.layer.3.attention.output.dense";
  CHECK(budget_totals(bert, t, dev).trainable_count == 768 * 768 + 768);
  static const auto vit = models::vit_b_16();
  t.train_only = "encoder.layers.encoder_layer_11.self_attention.out_proj";
  CHECK(budget_totals(vit, t, dev).trainable_count == 768 * 768 + 768);
  t.train_only = "encoder.layers.encoder_layer_11.self_attention.in_proj";
  CHECK_THROWS_AS(budget_totals(vit, t, dev), std::invalid_argument);
  const auto names = module_names(vit);
  CHECK(std::find(names.begin(), names.end(), "encoder.layers.encoder_layer_{0..11}.self_attention.out_proj") != names.end());
}

TEST_CASE("an unknown part is an error of its own", "[names][parts]") {
  static const auto llama2 = models::llama(models::llama2_7b(16));
  training t{};
  t.batch = 1;
  t.train_only = "model.layers.31.self_attn.x_proj";
  try {
    budget_totals(llama2, t, dev);
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("part its op does not name"));
  }
  CHECK(part_names_below(llama2, "model.layers.31.self_attn.x_proj") == "q_proj, k_proj, v_proj, o_proj");
  CHECK(part_names_below(llama2, "model.layers.31.mlp.x_proj").empty());
  CHECK(!names_a_module(llama2, "model.layers.31.self_attn.x_proj"));
  CHECK(names_a_module(llama2, "model.layers.31.self_attn.q_proj"));
  const auto names = module_names(llama2);
  CHECK(std::find(names.begin(), names.end(), "model.layers.{0..31}.self_attn.q_proj") != names.end());
}

// Modules inside the mobile nets' and DenseNet's blocks, named as torchvision names them
// (Conv2dNormActivation's 0 conv, 1 norm, 2 activation; mobilenetv2.py InvertedResidual.conv,
// mobilenetv3.py and efficientnet.py .block; densenet.py _DenseLayer, "denselayer%d").
TEST_CASE("modules inside mobile and dense blocks", "[names]") {
  training t{};
  t.batch = 1;
  const auto trains = [&](const auto& m, const char* name) {
    t.train_only = name;
    return budget_totals(m, t, dev).trainable_count;
  };
  static const auto v2 = models::mobilenet_v2();
  // features.3 (24 -> 144 -> 24): its expand conv Conv2d(24, 144, 1); features.1 has no expand:
  // conv.0.0 is the depthwise Conv2d(32, 32, 3, groups 32), conv.1 Conv2d(32, 16, 1), conv.2 BN(16)
  CHECK(trains(v2, "features.3.conv.0.0") == 24 * 144);
  CHECK(trains(v2, "features.3.conv.3") == 2 * 24);
  CHECK(trains(v2, "features.1.conv.0.0") == 32 * 9);
  CHECK(trains(v2, "features.1.conv.1") == 32 * 16);
  CHECK(trains(v2, "features.1.conv.2") == 2 * 16);
  CHECK(trains(v2, "features.18.0") == 320 * 1280);
  // EfficientNet-B0 stage 2's block 0 (16 -> 96 -> 24, stride 2): depthwise Conv2d(96, 96, 3);
  // block 1 (24 -> 144 -> 24): SqueezeExcitation(144, 6): fc1 144·6 + 6, fc2 6·144 + 144;
  // project Conv2d(144, 24, 1)
  static const auto b0 = models::efficientnet_b0();
  CHECK(trains(b0, "features.2.0.block.1.0") == 96 * 9);
  CHECK(trains(b0, "features.2.1.block.2") == 144 * 6 + 6 + 6 * 144 + 144);
  CHECK(trains(b0, "features.2.1.block.3.0") == 144 * 24);
  CHECK(trains(b0, "features.1.0.block.0.0") == 32 * 9);  // no expand: the depthwise conv first
  CHECK(names_a_module(b0, "features.2.1.stochastic_depth"));
  // MobileNetV3-Large features.4 (24 -> 72 -> 40, SE): SqueezeExcitation(72, 24) = 72·24 + 24 +
  // 24·72 + 72; project Conv2d(72, 40, 1)
  static const auto v3 = models::mobilenet_v3_large();
  CHECK(trains(v3, "features.4.block.2") == 72 * 24 + 24 + 24 * 72 + 72);
  CHECK(trains(v3, "features.4.block.3.0") == 72 * 40);
  CHECK(trains(v3, "features.1.block.0.0") == 16 * 9);
  // SqueezeExcitation's fc1 and fc2 (torchvision/ops/misc.py) are parts of its op
  CHECK(trains(v3, "features.4.block.2.fc1") == 72 * 24 + 24);
  CHECK(trains(v3, "features.4.block.2.fc2") == 24 * 72 + 72);
  CHECK(trains(b0, "features.2.1.block.2.fc2") == 6 * 144 + 144);
  CHECK(names_a_module(v3, "features.4.block.2.fc1"));
  CHECK(!names_a_module(v3, "features.4.block.2.fc3"));
  CHECK(part_names_below(v3, "features.4.block.2.fc3") == "fc1, fc2");
  // DenseNet-121 denseblock1's third layer sees 64 + 2·32 = 128 channels: norm1 BN(128),
  // conv1 Conv2d(128, 128, 1), conv2 Conv2d(128, 32, 3)
  static const auto dn = models::densenet121();
  CHECK(trains(dn, "features.denseblock1.denselayer3.conv1") == 128 * 128);
  CHECK(trains(dn, "features.denseblock1.denselayer3.norm1") == 2 * 128);
  CHECK(trains(dn, "features.denseblock1.denselayer3.conv2") == 128 * 32 * 9);
  CHECK(names_a_module(dn, "features.denseblock3.denselayer24"));
  CHECK(!names_a_module(dn, "features.denseblock3.denselayer25"));
  // a prefix of denselayer1 is not denselayer10 .. 16 as well: the whole layer 1 of block 4
  // (in 512 + 0·32): norm1 2·512 + conv1 512·128 + norm2 2·128 + conv2 128·32·9
  CHECK(trains(dn, "features.denseblock4.denselayer1.") == 2 * 512 + 512 * 128 + 2 * 128 + 128 * 32 * 9);
}

// T5-small (transformers modeling_t5.py names): SelfAttention.q = Linear(512, 8·64, bias=False);
// EncDecAttention.o = Linear(512, 512); DenseReluDense.wi = Linear(512, 2048); the first block's
// SelfAttention also holds relative_attention_bias = Embedding(32, 8).
TEST_CASE("T5's attention projections and feed-forward by name", "[names][parts]") {
  static const auto t5 = models::t5(models::t5_small(16));
  training t{};
  t.batch = 1;
  const auto trains = [&](const char* name) {
    t.train_only = name;
    return budget_totals(t5, t, dev).trainable_count;
  };
  CHECK(trains("encoder.block.3.layer.0.SelfAttention.q") == 512 * 512);
  CHECK(trains("decoder.block.5.layer.1.EncDecAttention.o") == 512 * 512);
  CHECK(trains("encoder.block.0.layer.1.DenseReluDense.wi") == 512 * 2048);
  CHECK(trains("encoder.block.0.layer.0.SelfAttention") == 4 * 512 * 512 + 32 * 8);
  CHECK(trains("encoder.block.5.layer.0.SelfAttention") == 4 * 512 * 512);
  CHECK(trains("encoder.final_layer_norm") == 512);
  t.train_only = "encoder.block.3.layer.0.SelfAttention.x";
  CHECK_THROWS_AS(budget_totals(t5, t, dev), std::invalid_argument);
  CHECK(!names_a_module(t5, "encoder.block.6"));
}
