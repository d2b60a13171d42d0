// Issue C: every input the library refuses at compile time (tests/fail/*_ko.cpp) it refuses at
// run time too, with std::invalid_argument carrying the same words; budget sums never wrap.
#include <catch2/catch.hpp>
#include <gpubudget/gpubudget.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace {
using namespace gpubudget;

const auto mlp = sequential(input(512), linear(256), relu(), linear(10));
const auto named_mlp = sequential(input(64), named("body", sequential(linear(64), relu())), named("head", linear(10)));

template <std::size_t N>
std::string error_of(const model<N>& m, const training& t, const device& d = devices::generic_16gb) {
  try {
    (void)budget_totals(m, t, d);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

training batch(std::int64_t b) { training t{}; t.batch = b; return t; }

}  // namespace

TEST_CASE("policy numbers out of range are named at run time") {
  training t = batch(8);
  t.micro_batch = 3;
  CHECK(error_of(mlp, t) == "gpubudget: micro_batch does not divide batch (batch = micro_batch x accumulation steps)");
  t.micro_batch = -2;
  CHECK(error_of(mlp, t) == "gpubudget: micro_batch must be 0 (= batch) or positive");
  CHECK(error_of(mlp, batch(0)) == "gpubudget: batch must be positive (training::batch >= 1)");
  CHECK(error_of(mlp, batch(-4)) == "gpubudget: batch must be positive (training::batch >= 1)");
  t = batch(8);
  t.fragmentation_percent = 101;
  CHECK(error_of(mlp, t) == "gpubudget: fragmentation_percent out of range (0 to 100)");
  t.fragmentation_percent = -1;
  CHECK(error_of(mlp, t) == "gpubudget: fragmentation_percent out of range (0 to 100)");
  t.fragmentation_percent = 100;
  CHECK(error_of(mlp, t) == "(no error)");
}

TEST_CASE("train_only prefixes must each name a record") {
  training t = batch(8);
  t.train_only = "haed";
  CHECK(error_of(named_mlp, t) == "gpubudget: a train_only prefix matches no record name (or is empty); check the model's named(...) blocks");
  t.train_only = "head,";
  CHECK_THAT(error_of(named_mlp, t), Catch::Contains("train_only prefix matches no record name"));
  t.train_only = "he";  // a prefix of a name
  CHECK(error_of(named_mlp, t) == "(no error)");
  t.train_only = "body,head";
  CHECK(error_of(named_mlp, t) == "(no error)");
}

TEST_CASE("device terms are checked") {
  CHECK(error_of(mlp, batch(8), custom_device("none", 0)) == "gpubudget: device capacity must be positive (bytes >= 1)");
  CHECK_THAT(error_of(mlp, batch(8), custom_device("odd", 16 * GB, -1)), Catch::Contains("must not be negative"));
}

TEST_CASE("layer sizes out of range are named at run time") {
  const auto t = batch(2);
  CHECK_THAT(error_of(sequential(input(16, 64), attention(64, heads(0))), t), Catch::Contains("heads must be positive"));
  CHECK_THAT(error_of(sequential(input(16, 64), attention(64, heads(4), kv_heads(-2))), t), Catch::Contains("kv_heads must be 0"));
  CHECK_THAT(error_of(sequential(input(16, 64), attention(64, heads(4), kv_tokens(-1))), t), Catch::Contains("kv_tokens must be 0"));
  CHECK_THAT(error_of(sequential(input(3, 32, 32), conv2d(16, 0)), t), Catch::Contains("kernel size must be positive"));
  CHECK_THAT(error_of(sequential(input(3, 32, 32), max_pool2d(2, stride(0))), t), Catch::Contains("stride must be positive"));
  CHECK_THAT(error_of(sequential(input(8, 8, 32), window_attention(heads(2), 0)), t), Catch::Contains("window size must be positive"));
  CHECK_THAT(error_of(sequential(tokens(16), embedding(0, 64)), t), Catch::Contains("vocabulary size"));
  CHECK_THAT(error_of(sequential(tokens(0), embedding(10, 64)), t), Catch::Contains("sequence length must be positive"));
  CHECK_THAT(error_of(sequential(input(3, 0, 32), conv2d(16, 1)), t), Catch::Contains("every input dimension must be positive"));
  CHECK_THAT(error_of(sequential(tokens(129), embedding(100, 64), learned_positions(128)), t), Catch::Contains("sequence longer than the model's positions"));
  CHECK_THAT(error_of(sequential(input(512), dropout(150)), t), Catch::Contains("dropout percent out of range (0 to 100)"));
  CHECK_THROWS_WITH(attention(64, heads(4), attention_dropout(-1)), Catch::Contains("dropout percent out of range"));
  CHECK_THROWS_WITH(repeat(0, linear(8)), Catch::Contains("repeat count must be positive"));
}

TEST_CASE("structural misuse is named at run time") {
  const auto t = batch(2);
  CHECK_THAT(error_of(sequential(), t), Catch::Contains("the model has no layers"));
  CHECK_THAT(error_of(sequential(input(64), linear(64), input(64), linear(10)), t), Catch::Contains("input(...) in the middle of a model"));
  CHECK_THAT(error_of(sequential(input(64), shared(1, linear(64)), shared(1, linear(32))), t), Catch::Contains("shared(id, ...) reused"));
  CHECK_THAT(error_of(sequential(input(64), shared(1, linear(64), relu()), shared(1, linear(64))), t), Catch::Contains("shared(id, ...) reused"));
  CHECK(error_of(sequential(input(64), shared(1, linear(64)), shared(1, linear(64))), t) == "(no error)");
  // a tied output projection shares the embedding's table: different ops, one weight
  CHECK(error_of(sequential(tokens(8), shared(1, embedding(100, 64)), shared(1, tied_linear(100))), t) == "(no error)");
  CHECK_THAT(error_of(sequential(input(3, 8, 8), permute(1, 1, 0)), t), Catch::Contains("permute names an axis twice"));
}

TEST_CASE("percentages and bounds of the checks and the planner are named") {
  const auto b = budget_totals(mlp, batch(8), devices::generic_16gb);
  CHECK_THROWS_WITH(fits(b, 0), "gpubudget: percent of capacity out of range (1 to 100)");
  CHECK_THROWS_WITH(fits(b, 101), "gpubudget: percent of capacity out of range (1 to 100)");
  CHECK(fits(b, 100));
  CHECK_THROWS_WITH(max_micro_batch(mlp, batch(8), devices::generic_16gb, batch_bounds{64, 8}), "gpubudget: batch bounds out of order (1 <= min <= max)");
  CHECK_THROWS_WITH(max_micro_batch(mlp, batch(8), devices::generic_16gb, batch_bounds{0, 8}), Catch::Contains("batch bounds out of order"));
  CHECK_THROWS_WITH(max_micro_batch(mlp, batch(8), devices::generic_16gb, batch_bounds{1, 8}, 120), Catch::Contains("percent of capacity out of range"));
}

TEST_CASE("budget sums are overflow-checked, never wrapped") {
  memory_budget b{};
  b.parameters = std::numeric_limits<std::int64_t>::max() / 2 + 1;
  b.optimizer_state = std::numeric_limits<std::int64_t>::max() / 2 + 1;
  CHECK_THROWS_WITH(b.resident(), Catch::Contains("byte count overflows 64 bits"));
  memory_budget c{};
  c.step_peak = std::numeric_limits<std::int64_t>::max();
  c.cuda_context = 1;
  CHECK_THROWS_WITH(c.total(), Catch::Contains("byte count overflows 64 bits"));
  // a batch whose activations pass 2^63 bytes: an error, not a wrapped total that "fits"
  training huge = batch(std::int64_t{1} << 50);
  CHECK_THAT(error_of(sequential(input(3, 224, 224), conv2d(64, 3), relu()), huge), Catch::Contains("byte count overflows 64 bits"));
}

// A layer that cannot apply to its input names itself and the shape it got (tests/fail twins:
// conv_kernel_larger_than_input, pooling_window_larger_than_input, unfold_kernel_larger_than_input,
// patch_larger_than_image, embedding_on_float_input).
TEST_CASE("a layer that cannot apply to its input names itself and the shape") {
  CHECK(error_of(sequential(input(3, 4, 4), conv2d(8, 7)), batch(8)) ==
        "gpubudget: convolution kernel larger than its padded input (kernel (dilated) 7, input [3,4,4])");
  CHECK(error_of(sequential(input(3, 4, 4), conv2d(8, 3, dilation(3))), batch(8)) ==
        "gpubudget: convolution kernel larger than its padded input (kernel (dilated) 7, input [3,4,4])");
  CHECK(error_of(sequential(input(3, 2, 2), max_pool2d(3, stride(2))), batch(8)) ==
        "gpubudget: pooling window larger than its padded input: the map would shrink to nothing (window 3, input [3,2,2])");
  CHECK(error_of(sequential(input(3, 2, 2), avg_pool2d(5, stride(1), padding(1))), batch(8)) ==
        "gpubudget: pooling window larger than its padded input: the map would shrink to nothing (window 5, input [3,4,4])");
  CHECK(error_of(sequential(input(4, 3, 3), unfold(5)), batch(8)) == "gpubudget: unfold kernel larger than its padded input (kernel 5, input [4,3,3])");
  CHECK(error_of(sequential(input(3, 8, 8), patch_embedding(64, 16)), batch(8)) ==
        "gpubudget: patch embedding's patch larger than the image (patch 16, input [3,8,8])");
  CHECK(error_of(sequential(input(3, 32, 32), embedding(1000, 64)), batch(8)) ==
        "gpubudget: embedding needs token ids (tokens(n)), not a float tensor (num_embeddings 1000, input [3,32,32])");
  // what does fit still runs: a window as large as the padded map gives a 1x1 map
  CHECK(error_of(sequential(input(3, 3, 3), max_pool2d(3, stride(2))), batch(8)) == "(no error)");
  CHECK(error_of(sequential(input(3, 1, 1), conv2d(8, 3, padding(1))), batch(8)) == "(no error)");
}

// A per-sample scalar (mean over the only dimension) has no feature dimension for a Linear: an
// error, not an index at -1 (out of bounds: what the sanitizer pass of scripts/test reports).
TEST_CASE("a linear layer on a per-sample scalar is refused") {
  CHECK(error_of(sequential(input(8), mean_over(0), linear(4)), batch(8)) == "gpubudget: tensor rank not supported by this layer");
}
