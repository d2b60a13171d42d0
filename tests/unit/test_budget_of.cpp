// budget_totals_of and max_micro_batch_of with the caching allocator model: the replay split into
// constant evaluations (budget_of.hpp), held to budget_totals and
// max_micro_batch, which replay in one evaluation (here at run time: at compile time ResNet-18's
// checkpointed blocks and the batch search pass Clang's default limit that way).
#include <catch2/catch.hpp>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>

#include "../support/same_budget.hpp"

#include <cstddef>

using namespace gpubudget;

namespace {
using testing::same_budget;

constexpr auto net = models::resnet18(64, 10);
constexpr training plan{.batch = 8, .model_allocator = true};
constexpr training expandable{.batch = 8, .model_allocator = true, .allocator = {.expandable_segments = true}};

// more plans on a small CNN: gradient accumulation (two micro-batches walked), the fused and
// 8-bit optimizers, SGD with momentum, PYTORCH_CUDA_ALLOC_CONF's max_split_size_mb and
// roundup_power2_divisions, checkpointed blocks, a job of twelve steps capped on 1 % of a T4
constexpr auto cnn = models::resnet18(32, 10);
constexpr training variants[] = {
    {.batch = 64, .micro_batch = 16, .model_allocator = true},
    {.batch = 32, .step = step_impl::fused, .model_allocator = true},
    {.batch = 32, .optimizer = optimizer_kind::adamw8bit, .model_allocator = true},
    {.batch = 32, .optimizer = optimizer_kind::sgd_momentum, .model_allocator = true,
     .allocator = alloc_conf("max_split_size_mb:64,roundup_power2_divisions:4")},
    {.batch = 32, .checkpoint_blocks = true, .model_allocator = true},
};
template <std::size_t K>
bool variant_matches() {
  constexpr auto split = budget_totals_of<cnn, variants[K], devices::t4>();
  return split.allocator_modelled && same_budget(split, budget_totals(cnn, variants[K], devices::t4));
}

inline constexpr device t4_one_percent = custom_device("1 % of a T4", devices::t4.capacity / 100, devices::t4.context / 100);
constexpr training long_job{.batch = 256, .model_allocator = true, .steps = 12};
}  // namespace

TEST_CASE("budget_totals_of gives budget_totals's numbers under more plans", "[budget_of]") {
  CHECK(variant_matches<0>());
  CHECK(variant_matches<1>());
  CHECK(variant_matches<2>());
  CHECK(variant_matches<3>());
  CHECK(variant_matches<4>());
  constexpr auto long_job_split = budget_totals_of<cnn, long_job, t4_one_percent>();
  CHECK(long_job_split.reserved_peak > t4_one_percent.capacity - t4_one_percent.context);  // the capped run is replayed
  CHECK(same_budget(long_job_split, budget_totals(cnn, long_job, t4_one_percent)));
}

TEST_CASE("max_micro_batch_of replays each probe step by step and answers as max_micro_batch", "[budget_of]") {
  // on 20 % of a T4 (3.2 GB) the capped allocator decides: its answer fits, the next batch does not
  constexpr auto split = max_micro_batch_of<net, plan, devices::t4, batch_bounds{}, 20>();
  CHECK(split == max_micro_batch(net, plan, devices::t4, {}, 20));
  CHECK(split > 8);
  constexpr auto split_expandable = max_micro_batch_of<net, expandable, devices::t4, batch_bounds{}, 20>();
  CHECK(split_expandable == max_micro_batch(net, expandable, devices::t4, {}, 20));
}

TEST_CASE("max_micro_batch_of's answer at the search's edge: the capped run fits at the answer, not one above", "[budget_of]") {
  constexpr auto answer = max_micro_batch_of<net, plan, devices::t4, batch_bounds{}, 20>();
  device fifth = devices::t4;
  fifth.capacity = devices::t4.capacity / 5;
  training at = plan;
  at.batch = answer;
  CHECK(fits(budget_totals(net, at, fifth)));
  at.batch = answer + 1;
  CHECK_FALSE(fits(budget_totals(net, at, fifth)));
}

namespace {
// a chain of 70 blocks of 10 layers (770 forward units), walked 300 units per evaluation (the
// default is 1,000 on Clang, 3,000 on GCC): the budget with and without the allocator model, and
// the batch search, whose traced step and probes then walk it in pieces too. Nested in one named
// sequence below the root, as an exported model is: the split walk goes into it, and into blocks
constexpr auto block = sequential(linear(96), layer_norm(), gelu(), linear(64), relu(), conv1d(8, 3, padding(1)), batch_norm(), silu(),
                                  dropout(10), tanh());
#define GPUBUDGET_TEST_TEN_BLOCKS block, block, block, block, block, block, block, block, block, block
constexpr auto long_chain =
    sequential(input(8, 64), named("features", sequential(GPUBUDGET_TEST_TEN_BLOCKS, GPUBUDGET_TEST_TEN_BLOCKS, GPUBUDGET_TEST_TEN_BLOCKS,
                                                          GPUBUDGET_TEST_TEN_BLOCKS, GPUBUDGET_TEST_TEN_BLOCKS, GPUBUDGET_TEST_TEN_BLOCKS,
                                                          GPUBUDGET_TEST_TEN_BLOCKS)),
               layer_norm());
#undef GPUBUDGET_TEST_TEN_BLOCKS
constexpr std::int64_t units = 300;
constexpr training chain_plan{.batch = 16};
constexpr training chain_amp{.batch = 16, .precision = precision_mode::amp_fp16, .model_allocator = true};
constexpr auto small_gpu = custom_device("1 GB", GB);
}  // namespace

TEST_CASE("a model longer than one evaluation's walk: its budget and largest micro-batch walked in pieces", "[budget_of]") {
  STATIC_REQUIRE(!detail::walks_whole(long_chain, chain_plan, units));
  STATIC_REQUIRE(detail::split_walk<long_chain, chain_plan, false, units>::evaluations() > 2);
  STATIC_REQUIRE(detail::split_walk<long_chain, chain_plan, false, units>::after<0>().progress.depth > 0);  // stopped inside `features`
  CHECK(same_budget(detail::split_totals<long_chain, chain_plan, devices::t4, 100, false, units>(), budget_totals(long_chain, chain_plan, devices::t4)));
  CHECK(same_budget(detail::split_totals<long_chain, chain_amp, devices::t4, 100, false, units>(), budget_totals(long_chain, chain_amp, devices::t4)));
  constexpr auto answer = detail::separate_budgets<long_chain, chain_plan, small_gpu, batch_bounds{}, 100, units>::answer();
  CHECK(answer > 1);
  CHECK(answer < 4096);  // inside the bounds: the search ran
  CHECK(answer == max_micro_batch(long_chain, chain_plan, small_gpu));
  CHECK(max_micro_batch_of<long_chain, chain_plan, small_gpu>() == answer);  // at the compiler's own units
}
