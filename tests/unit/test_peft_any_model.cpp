// models::get_peft_model (models/peft.hpp): PEFT's LoRA by target_modules names on any model. The
// same names on transformers' T5 and GPT-2 give exactly what the family builders (t5_lora,
// gpt_lora, whose counts equal PEFT's print_trainable_parameters) give; on torchvision's ViT the
// counts are PEFT's arithmetic; every misuse is a named error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>
#include <gpubudget/models/transformers.hpp>
#include <gpubudget/models/torchvision.hpp>

using namespace gpubudget;

namespace {
constexpr training two{.batch = 2};

template <class A, class B>
void same_budget(const A& a, const B& b) {
  CHECK(a.parameter_count == b.parameter_count);
  CHECK(a.trainable_count == b.trainable_count);
  CHECK(a.gradients == b.gradients);
  CHECK(a.saved_activations == b.saved_activations);
  CHECK(a.after_forward == b.after_forward);
  CHECK(a.fwd_bwd_peak == b.fwd_bwd_peak);
  CHECK(a.step_peak == b.step_peak);
}

std::string error_of(const char* targets, const models::lora_config& l = {.rank = 8}) {
  try {
    (void)models::get_peft_model(models::vit_b_16(224, 1000), targets, l);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

// A constant expression: the adapted ViT's counts in a static_assert.
constexpr auto vit_mlp = models::get_peft_model(models::vit_b_16(224, 1000), "mlp.0,mlp.3", {.rank = 8});
static_assert(budget(vit_mlp, training{.batch = 8}, devices::t4).trainable_count == 12 * 8 * 2 * (768 + 3072));
// DoRA on a convolution as a constant expression: lora_A [4, 3, 3, 3], lora_B [16, 4, 1, 1] and the
// magnitude [1, 16, 1, 1]
constexpr auto dora_stem = models::get_peft_model(sequential(input(3, 32, 32), named("stem", conv2d(16, 3, padding(1))), relu()), "stem",
                                                  {.rank = 4, .dora = true});
static_assert(budget(dora_stem, training{.batch = 8}, devices::t4).trainable_count == 4 * 3 * 9 + 16 * 4 + 16);

TEST_CASE("get_peft_model on T5 by name builds what t5_lora builds") {
  const auto t = models::t5_small(128);
  same_budget(budget(models::get_peft_model(models::t5(t), "q,v", {.rank = 8}), two, devices::a100_80gb),
              budget(models::t5_lora(t, {.rank = 8, .targets = t5_q | t5_v}), two, devices::a100_80gb));
  same_budget(budget(models::get_peft_model(models::t5(t), "q,k,v,o,wi,wo", {.rank = 4, .dora = true}), two, devices::a100_80gb),
              budget(models::t5_lora(t, {.rank = 4, .targets = all_linear, .dora = true}), two, devices::a100_80gb));
}

TEST_CASE("get_peft_model on GPT-2 by name builds what gpt_lora builds (c_attn: one adapter over q, k, v)") {
  const auto g = models::gpt2_small(128);
  const auto by_name = budget(models::get_peft_model(models::gpt(g), "c_attn", {.rank = 8}), two, devices::a100_80gb);
  same_budget(by_name, budget(models::gpt_lora(g, {.rank = 8, .targets = c_attn}), two, devices::a100_80gb));
  CHECK(by_name.trainable_count == 294912);  // PEFT: 12 x 8 x (768 + 2304)
  same_budget(budget(models::get_peft_model(models::gpt(g), "c_attn,c_proj,c_fc", {.rank = 8}), two, devices::a100_80gb),
              budget(models::gpt_lora(g, {.rank = 8, .targets = all_linear}), two, devices::a100_80gb));
}

TEST_CASE("get_peft_model on torchvision's ViT-B/16: PEFT's counts, only the adapters train") {
  const training plan{.batch = 16};
  const auto full = budget(models::vit_b_16(224, 1000), plan, devices::a100_80gb);
  const auto lora = budget(vit_mlp, plan, devices::a100_80gb);
  // lora_A [8, in] and lora_B [out, 8] on each block's mlp.0 (768 -> 3072) and mlp.3 (3072 -> 768)
  CHECK(lora.trainable_count == 737280);
  CHECK(lora.parameter_count == full.parameter_count + 737280);
  CHECK(lora.gradients == 737280 * 4);
  CHECK(lora.optimizer_state == 2 * 737280 * 4);
  // frozen attention, norms and patch embedding keep no inputs for weight gradients
  CHECK(lora.saved_activations < full.saved_activations);
  // a module two targets name (`3` is the end of `...mlp.3`'s path) is adapted once
  CHECK(budget(models::get_peft_model(models::vit_b_16(224, 1000), "mlp.0,mlp.3,3", {.rank = 8}), plan, devices::a100_80gb)
            .trainable_count == 737280);
}

TEST_CASE("get_peft_model: a projection an attention names (BERT's self.query) takes an adapter") {
  const auto b = models::bert_base(128);
  const auto q_v = budget(models::get_peft_model(models::bert(b), "query,value", {.rank = 8}), two, devices::a100_80gb);
  CHECK(q_v.trainable_count == 12 * 2 * 8 * (768 + 768));
  const auto full = budget(models::bert(b), two, devices::a100_80gb);
  CHECK(q_v.parameter_count == full.parameter_count + q_v.trainable_count);
}

TEST_CASE("get_peft_model with modules_to_save: GPT-2's classifier as PEFT's SEQ_CLS makes it") {
  const auto g = models::gpt2_small(128);
  const auto b = budget(models::get_peft_model(models::gpt_seq_cls(g, 2), "c_attn", {.rank = 8}, "score"), two, devices::a100_80gb);
  // GPT2Model (124,439,808), the score head [2, 768] frozen and its trainable copy, the adapters
  CHECK(b.parameter_count == 124439808 + 2 * 1536 + 294912);
  CHECK(b.trainable_count == 294912 + 1536);
  CHECK(b.gradients == (294912 + 1536) * 4);
  // only a Linear head is modelled as a trainable copy
  CHECK_THROWS_WITH(models::get_peft_model(models::gpt_seq_cls(g, 2), "c_attn", {.rank = 8}, "ln_f"),
                    Catch::Contains("modules_to_save name matches no nn.Linear"));
}

TEST_CASE("get_peft_model on convolutions: PEFT's lora.Conv (lora_A with the base's geometry, a 1x1 lora_B)") {
  const training plan{.batch = 4};
  // every BasicBlock's conv2 of ResNet-18: 3x3, c -> c, for c = 64, 128, 256, 512 (two blocks each)
  const auto lora = budget(models::get_peft_model(models::resnet18(96, 1000), "conv2", {.rank = 8}), plan, devices::a100_80gb);
  std::int64_t adapters = 0;
  for (const std::int64_t ch : {64, 128, 256, 512}) adapters += 2 * (8 * ch * 9 + ch * 8);
  CHECK(lora.trainable_count == adapters);
  const auto full = budget(models::resnet18(96, 1000), plan, devices::a100_80gb);
  CHECK(lora.parameter_count == full.parameter_count + adapters);
  CHECK(lora.gradients == adapters * 4);
  CHECK(lora.saved_activations < full.saved_activations);
  // the rank is bounded by the adapted weight [out, in · k²]: a 3x3 stem on 3 channels is [64, 27]
  const auto stem = sequential(input(3, 32, 32), named("stem", conv2d(64, 3, padding(1))), relu());
  CHECK(budget(models::get_peft_model(stem, "stem", {.rank = 27}), plan, devices::a100_80gb).trainable_count == 27 * 27 + 64 * 27);
  CHECK_THROWS_WITH(budget(models::get_peft_model(stem, "stem", {.rank = 28}), plan, devices::a100_80gb), Catch::Contains("LoRA rank"));
  // a grouped convolution (PEFT >= 0.15): a dense lora_A [r, in, k, k], lora_B [out, r / groups, 1, 1]
  const auto grouped = sequential(input(64, 16, 16), named("conv2", conv2d(64, 3, padding(1), groups(32))), relu());
  CHECK(budget(models::get_peft_model(grouped, "conv2", {.rank = 32}), plan, devices::a100_80gb).trainable_count == 32 * 64 * 9 + 64 * 1);
  // PEFT raises for a rank that is not a multiple of the groups (ConvNeXt's depthwise block.0: 96 groups and more)
  CHECK_THROWS_WITH(budget(models::get_peft_model(grouped, "conv2", {.rank = 8}), plan, devices::a100_80gb), Catch::Contains("multiple of its groups"));
  CHECK_THROWS_WITH(budget(models::get_peft_model(models::convnext_tiny(64, 10), "block.0", {.rank = 4}), plan, devices::a100_80gb),
                    Catch::Contains("multiple of its groups"));
  // a dilated convolution: PEFT's lora_A takes no dilation (its output would not match the base's)
  const auto dilated = sequential(input(8, 16, 16), named("c", conv2d(8, 3, padding(2), dilation(2))));
  CHECK_THROWS_WITH(models::get_peft_model(dilated, "c", {.rank = 4}), Catch::Contains("is not one LoRA is modelled on"));
}

TEST_CASE("get_peft_model refuses what PEFT refuses or the library does not model, by name") {
  CHECK(error_of("nothing").find("matches no module") != std::string::npos);
  CHECK(error_of("").find("matches no module") != std::string::npos);
  CHECK(error_of("conv_proj").find("is not one LoRA is modelled on") != std::string::npos);  // the patch embedding op
  CHECK(error_of("mlp").find("is not one LoRA is modelled on") != std::string::npos);  // MLPBlock, the module above mlp.0
  CHECK(error_of("encoder_layer_3.mlp.0").find("some copies of a repeated block") != std::string::npos);
  CHECK(error_of("all-linear").find("all-linear") != std::string::npos);
  CHECK(error_of("out_proj").find("adapt_merged alone") != std::string::npos);
  CHECK(error_of("mlp.0", {.rank = 8, .modules_to_save = models::save_lm_head}).find("modelled on the transformers families") != std::string::npos);
  CHECK(error_of("mlp.0", {.rank = 0}).find("LoRA rank") != std::string::npos);
}

TEST_CASE("get_peft_model wraps an nn.Embedding in PEFT's lora.Embedding") {
  const auto lm = sequential(tokens(64), named("embed", embedding(2000, 64)), named("blocks", linear(64)), gelu(), named("head", linear(2000)));
  const auto plan = training{.batch = 2};
  const auto lora = budget(models::get_peft_model(lm, "embed", {.rank = 8}), plan, devices::a100_80gb);
  // lora_embedding_A [r, num] and lora_embedding_B [dim, r]; the table, the block and the head frozen
  CHECK(lora.trainable_count == 8 * (2000 + 64));
  CHECK(lora.parameter_count == budget(lm, plan, devices::a100_80gb).parameter_count + 8 * (2000 + 64));
  CHECK(lora.gradients == 8 * (2000 + 64) * 4);
  // the adapter's embedding keeps the ids, its matmul after_A [2, 64, 8]; the frozen linears keep
  // their inputs' path only (the GELU's input: the gradient flows back to the adapter)
  const auto ids = 2 * 64 * 8, after_a = 2 * 64 * 8 * 4, gelu_input = 2 * 64 * 64 * 4;
  CHECK(lora.saved_activations == ids + after_a + gelu_input);
  // lora_dropout does not reach the embedding (PEFT's Embedding.forward has none)
  CHECK(budget(models::get_peft_model(lm, "embed", {.rank = 8, .dropout_percent = 10}), plan, devices::a100_80gb).saved_activations ==
        lora.saved_activations);
  // the rank is bounded by the table [num, dim]; a tied embedding is refused
  CHECK_THROWS_WITH(budget(models::get_peft_model(lm, "embed", {.rank = 65}), plan, devices::a100_80gb), Catch::Contains("LoRA rank"));
  CHECK_THROWS_WITH(models::get_peft_model(models::gpt(models::gpt2_small(128)), "wte", {.rank = 8}), Catch::Contains("tied heads and embeddings"));
  // BERT's word embeddings by name: PEFT's count, vocab·r + r·width
  const auto bert = budget(models::get_peft_model(models::bert(models::bert_base(128)), "word_embeddings", {.rank = 8}), plan, devices::a100_80gb);
  CHECK(bert.trainable_count == 8 * (30522 + 768));
}

// PEFT's DoRA (use_dora=True) on a convolution and an embedding (lora_conv.hpp dora_conv,
// lora_embedding.hpp dora_embedding; peft/tuners/lora/dora.py _DoraConvNdLayer.forward and
// DoraEmbeddingLayer.forward): what the forward keeps beyond LoRA's, written out from PEFT's code.
TEST_CASE("get_peft_model with use_dora on a convolution and an embedding: PEFT's DoRA variants") {
  const training plan = cpu_reference_step(2, adamw, runtime_kind::torch2_6_cpu);  // measure_custom.py's step
  // a biased 3x3 stem, 3 -> 16 channels on 32x32, whose input needs no gradient
  const auto stem = sequential(input(3, 32, 32), named("stem", conv2d(16, 3, padding(1))), relu());
  const auto lora = budget(models::get_peft_model(stem, "stem", {.rank = 4}), plan, devices::a100_80gb);
  const auto dora = budget(models::get_peft_model(stem, "stem", {.rank = 4, .dora = true}), plan, devices::a100_80gb);
  // the magnitude [1, 16, 1, 1] (DoraLinearLayer.update_layer's weight norm) trains, in fp32, with AdamW's two moments
  CHECK(dora.trainable_count == lora.trainable_count + 16);
  CHECK(dora.parameter_count == lora.parameter_count + 16);
  CHECK(dora.gradients == lora.gradients + 16 * 4);
  // (mag_norm_scale - 1)·(result - bias) keeps the bias-free base output, mag_norm_scale·lora_B(..)
  // keeps B's output [2, 16, 32, 32] and mag_norm_scale [16]; mag_norm_scale's DivBackward keeps
  // the detached weight_norm [16] (the base output needs no gradient: (mag_norm_scale - 1) is not kept)
  const std::int64_t output = 2 * 16 * 32 * 32 * 4;
  CHECK(dora.saved_activations == lora.saved_activations + 2 * output + 2 * 16 * 4);
  // lora_dropout > 0: PEFT convolves the dropped input with the base weight again (base_result=None),
  // a frozen convolution of an input that needs no gradient: it keeps nothing, its output is kept
  // instead of the bias-free base output; the base weight is not counted twice
  const auto lora_drop = budget(models::get_peft_model(stem, "stem", {.rank = 4, .dropout_percent = 10}), plan, devices::a100_80gb);
  const auto dora_drop = budget(models::get_peft_model(stem, "stem", {.rank = 4, .dropout_percent = 10, .dora = true}), plan, devices::a100_80gb);
  CHECK(dora_drop.parameter_count == dora.parameter_count);
  CHECK(dora_drop.saved_activations == lora_drop.saved_activations + 2 * output + 2 * 16 * 4);
  // measured (tests/export/measure_custom.py resnet18_dora_conv2_r8_b2_224, PEFT's forward
  // written out): 155,520 trainable, saved 36,556,672 bytes, forward-backward peak 64,377,864
  const auto resnet = budget(models::get_peft_model(models::resnet18(224, 1000), "conv2", {.rank = 8, .dora = true}), plan, devices::a100_80gb);
  CHECK(resnet.trainable_count == 155520);
  CHECK(std::abs(resnet.saved_activations - 36556672) * 100 <= 2 * 36556672);
  CHECK(std::abs(resnet.fwd_bwd_peak - 64377864) * 100 <= 3 * 64377864);

  // an embedding: the magnitude is one per embedding dimension [64]; the variant's
  // mag_norm_scale·result keeps the frozen table's output, mag_norm_scale·(after_A @ B) the
  // product [2, 64, 64] and mag_norm_scale, DivBackward the weight_norm
  const auto lm = sequential(tokens(64), named("embed", embedding(2000, 64)), named("blocks", linear(64)), gelu(), named("head", linear(2000)));
  const auto elora = budget(models::get_peft_model(lm, "embed", {.rank = 8}), plan, devices::a100_80gb);
  const auto edora = budget(models::get_peft_model(lm, "embed", {.rank = 8, .dora = true}), plan, devices::a100_80gb);
  CHECK(edora.trainable_count == elora.trainable_count + 64);
  CHECK(edora.saved_activations == elora.saved_activations + 2 * (2 * 64 * 64 * 4) + 2 * 64 * 4);
}

// PEFT's DoRA on a Linear (lora_projection.hpp dora_output; huggingface/peft 5d602fd, variants.py
// DoraLinearVariant.forward and dora.py DoraLinearLayer.forward) under autocast bf16 (fp32 weights),
// on a base whose input needs a gradient: what DoRA keeps beyond LoRA's, written out from PEFT's code.
TEST_CASE("get_peft_model with use_dora on a Linear: base_result less the bias, and the base run again under lora_dropout") {
  const training plan{.batch = 2, .precision = amp_bf16};
  // fc's input needs a gradient: the linear before it trains (modules_to_save)
  const auto net = [](layer fc) { return sequential(input(16, 64), named("first", linear(64)), named("fc", fc), gelu()); };
  const auto saved = [&](layer fc, std::int64_t dropout, bool dora) {
    const models::lora_config l{.rank = 4, .dropout_percent = dropout, .dora = dora};
    return budget(models::get_peft_model(net(fc), "fc", l, "first"), plan, devices::a100_80gb).saved_activations;
  };
  const auto dora_keeps = [&](layer fc, std::int64_t dropout) { return saved(fc, dropout, true) - saved(fc, dropout, false); };
  const std::int64_t tokens = 2 * 16, in = 64, out = 32, norms = 2 * out * 4;  // mag_norm_scale, DivBackward's weight_norm: fp32 [32]
  // lora_dropout 0, no bias: (mag_norm_scale - 1)·base_result keeps the base's bf16 output,
  // mag_norm_scale·lora_result B's bf16 output
  CHECK(dora_keeps(linear(out, no_bias), 0) == 2 * tokens * out * 2 + norms);
  // a biased base: base_result - bias is a new tensor, the bf16 output less the fp32 bias: fp32
  CHECK(dora_keeps(linear(out), 0) == tokens * out * 4 + tokens * out * 2 + norms);
  // lora_dropout 0.1: base_result=None, F.linear(dropped x, W) without the bias: its bf16 output, and
  // the bf16 copy of W autocast makes (not cached: W needs no gradient) that its backward reads for the
  // dropped x's gradient, whatever the bias
  CHECK(dora_keeps(linear(out, no_bias), 10) == 2 * tokens * out * 2 + in * out * 2 + norms);
  CHECK(dora_keeps(linear(out), 10) == 2 * tokens * out * 2 + in * out * 2 + norms);
}

TEST_CASE("parts_named: an attention's own projection names (an exported one's) are get_peft_model's and train_only's targets") {
  constexpr auto attn = attention(64, heads(4), attention_impl::separate_qkv_sdpa, projection_names::separate);
  const auto block = [](layer a) { return sequential(input(16, 64), named("blocks.0", residual(named("norm1", layer_norm()), named("attn", a)))); };
  const auto own = block(parts_named("query,key,value,proj", attn));
  const training plan{.batch = 2};
  // PEFT's lora.Linear on query and value: A [4, 64] and B [64, 4] each
  const auto q_v = budget(models::get_peft_model(own, "query,attn.value", {.rank = 4}), plan, devices::a100_80gb);
  CHECK(q_v.trainable_count == 2 * 4 * (64 + 64));
  CHECK(q_v.parameter_count == 2 * 64 + 4 * (64 * 64 + 64) + q_v.trainable_count);
  // the same adapters under the op's default names q, k, v, out: the names change nothing else
  same_budget(q_v, budget(models::get_peft_model(block(attn), "q,v", {.rank = 4}), plan, devices::a100_80gb));
  // the default names are not the model's: `q` names nothing once the model's own names are given
  CHECK_THROWS_WITH(models::get_peft_model(own, "q", {.rank = 4}), Catch::Contains("matches no module"));
  // train_only by the model's name: only the output projection's weight and bias train
  CHECK(budget(own, training{.batch = 2, .train_only = "blocks.0.attn.proj"}, devices::a100_80gb).trainable_count == 64 * 64 + 64);
  const auto names = module_names(own);
  CHECK(std::find(names.begin(), names.end(), "blocks.0.attn.proj") != names.end());
  // a list that does not name every part, or an op that names none, is refused
  CHECK_THROWS_WITH(parts_named("query,key,value", attn), Catch::Contains("parts_named lists a number of names"));
  CHECK_THROWS_WITH(parts_named("query,,value,proj", attn), Catch::Contains("parts_named lists a number of names"));
  CHECK_THROWS_WITH(parts_named("fc", linear(8)), Catch::Contains("parts_named lists a number of names"));
}

TEST_CASE("get_peft_model on nn.MultiheadAttention: PEFT's lora.MultiheadAttention, its deltas merged into the weights") {
  const training plan{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto vit = models::vit_b_16(96, 1000);
  // lora_A [8, 768] and lora_B [2304, 8] on in_proj_weight, 8 x (768 + 768) on out_proj: 6 r E a layer
  const auto mha = budget(models::get_peft_model(vit, "self_attention", {.rank = 8}), plan, devices::a100_80gb);
  CHECK(mha.trainable_count == 12 * 6 * 8 * 768);
  CHECK(mha.parameter_count == budget(vit, plan, devices::a100_80gb).parameter_count + mha.trainable_count);
  // measured (measure_custom.py vit_b_16_lora_mha_r8_b2_96): saved 136,232,448 bytes, the merged
  // [2304, 768] and [768, 768] weights of every layer but the first in_proj (its input needs no
  // gradient) among them: 45 E^2 fp32 values of the 136 MB
  CHECK(std::abs(mha.saved_activations - 136232448) * 100 <= 2 * 136232448);
  CHECK(mha.saved_activations > (11 * 4 + 1) * 768 * 768 * 4);
  // PEFT raises for DoRA here; out_proj alone is a Linear whose forward nn.MultiheadAttention never calls
  CHECK_THROWS_WITH(models::get_peft_model(vit, "self_attention", {.rank = 8, .dora = true}), Catch::Contains("is not one LoRA is modelled on"));
  CHECK_THROWS_WITH(budget(models::get_peft_model(vit, "out_proj", {.rank = 8}), plan, devices::a100_80gb), Catch::Contains("adapt_merged alone"));
}
