// The rest of the LLM zoo (issue D): Qwen2, Gemma and T5 parameter counts pinned to the published
// ones (what transformers' sum(p.numel() for p in model.parameters()) gives), the simulated
// models agreeing with the closed forms, and the encoder-decoder's shared encoder output.
#include <catch2/catch.hpp>

#include <cstdint>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>
#include <gpubudget/serving.hpp>

using namespace gpubudget;

// Qwen/Qwen2-0.5B and Qwen/Qwen2-7B model cards ("0.49B", "7.6B"; the exact sums from their
// config.json: tests/cli/data/hf/README.md), google/gemma-2b ("2.5B").
static_assert(models::llama_parameter_count(models::qwen2_0_5b()) == 494'032'768);
static_assert(models::llama_parameter_count(models::qwen2_7b()) == 7'615'616'512);
static_assert(models::llama_parameter_count(models::gemma_2b()) == 2'506'172'416);
// T5ForConditionalGeneration (google-t5/t5-small ... t5-11b): the shared embedding once.
static_assert(models::t5_parameter_count(models::t5_small()) == 60'506'624);
static_assert(models::t5_parameter_count(models::t5_base()) == 222'903'552);
static_assert(models::t5_parameter_count(models::t5_large()) == 737'668'096);
static_assert(models::t5_parameter_count(models::t5_3b()) == 2'851'598'336);
static_assert(models::t5_parameter_count(models::t5_11b()) == 11'307'321'344);

TEST_CASE("Qwen2 and Gemma: the simulated models hold the published parameter counts") {
  for (const auto& g : {models::qwen2_0_5b(64), models::qwen2_7b(64), models::gemma_2b(64)})
    CHECK(budget_totals(models::llama(g), training{.batch = 1}, devices::a100_80gb).parameter_count == models::llama_parameter_count(g));
  // a tied head is the embedding's weight: untying Qwen2-0.5B adds vocab x width
  auto untied = models::qwen2_0_5b(64);
  untied.tied_head = false;
  CHECK(budget_totals(models::llama(untied), training{.batch = 1}, devices::a100_80gb).parameter_count == 494'032'768 + 151'936LL * 896);
}

TEST_CASE("Gemma: multi-query attention with 256-channel heads, GeGLU and the embedding scale") {
  const auto g = models::gemma_2b(128);
  // one key/value head of head_dim 256: the KV cache per token is 2 x 18 layers x 256 x 2 bytes
  CHECK(kv_bytes_per_token(g, dtype::bf16) == 2 * 18 * 256 * 2);
  // heads x head_dim need not be the width: 8 heads of 192 channels on a 2048-wide model
  auto narrow = g;
  narrow.head_dim = 192;
  const auto attention_per_layer = 2 * 2048 * 8 * 192 + 2 * 2048 * 192;
  CHECK(models::llama_parameter_count(g) - models::llama_parameter_count(narrow) == 18 * (2 * 2048 * 8 * 256 + 2 * 2048 * 256 - attention_per_layer));
  CHECK(budget_totals(models::llama(narrow), training{.batch = 1}, devices::a100_80gb).parameter_count == models::llama_parameter_count(narrow));
  // the √width scale is one more embedding-sized activation in forward (nothing saved)
  auto unscaled = g;
  unscaled.scaled_embedding = false;
  const auto with = budget_totals(models::llama(g), training{.batch = 1, .inference = true}, devices::a100_80gb);
  const auto without = budget_totals(models::llama(unscaled), training{.batch = 1, .inference = true}, devices::a100_80gb);
  CHECK(with.step_peak >= without.step_peak);
}

TEST_CASE("T5: the simulated models hold the published parameter counts") {
  for (const auto& t : {models::t5_small(64), models::t5_base(64), models::t5_large(64), models::t5_3b(64), models::t5_11b(64)})
    CHECK(budget_totals(models::t5(t), training{.batch = 1}, devices::a100_80gb).parameter_count == models::t5_parameter_count(t));
}

TEST_CASE("encoder_decoder: every cross-attention reads the one encoder output") {
  // a 2-layer decoder whose layers are distinct records: the first cross-attention saves the
  // encoder output (its k and v projections' input), the second finds it saved already
  constexpr std::int64_t width = 64, source = 48, target = 16;
  const auto cross = [] { return cross_attention(width, heads(4), kv_tokens(source), no_bias); };
  const auto m = sequential(encoder_decoder(sequential(input(source, width), linear(width)),
                                            sequential(input(target, width), linear(width), cross(), cross())));
  const auto b = budget(m, training{.batch = 2}, devices::a100_80gb);
  constexpr std::size_t first = 8, second = 9;  // root, encoder_decoder, encoder (3), decoder, input, linear, cross, cross
  REQUIRE(b.records[first].op == &detail::op_entry<cross_attention_op>::descriptor);
  REQUIRE(b.records[second].op == &detail::op_entry<cross_attention_op>::descriptor);
  const auto memory_bytes = 2 * source * width * 4;
  CHECK(b.per_record[first].saved_bytes - b.per_record[second].saved_bytes == memory_bytes);
  // the decoder's output, not the encoder's
  CHECK(b.per_record[0].output.dim[0] == target);
}

TEST_CASE("cross_attention outside an encoder_decoder, or over the wrong length, is an error") {
  const auto alone = sequential(input(16, 64), cross_attention(64, heads(4), kv_tokens(16)));
  CHECK_THROWS_WITH(budget_totals(alone, training{.batch = 1}, devices::a100_80gb), Catch::Contains("cross_attention(...) outside the decoder"));
  const auto wrong = sequential(encoder_decoder(input(32, 64), sequential(input(16, 64), cross_attention(64, heads(4), kv_tokens(16)))));
  CHECK_THROWS_WITH(budget_totals(wrong, training{.batch = 1}, devices::a100_80gb), Catch::Contains("shape mismatch"));
}

TEST_CASE("T5 under a checkpointed decoder: the encoder output stays for the re-run") {
  auto t = models::t5_small(64);
  const auto plain = budget_totals(models::t5(t), training{.batch = 2}, devices::a100_80gb);
  const auto ckpt = budget_totals(models::t5(t), training{.batch = 2, .checkpoint_blocks = true}, devices::a100_80gb);
  CHECK(ckpt.parameter_count == plain.parameter_count);
  CHECK(ckpt.step_peak < plain.step_peak);
}
