// max_micro_batch_of with the caching allocator model: each probe's replay split into one
// constant evaluation per training step (budget_of.hpp), the search the same as max_micro_batch's,
// whose probes replay in one evaluation (here at run time: at compile time they pass Clang's
// default limit).
#include <catch2/catch.hpp>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>

using namespace gpubudget;

namespace {
constexpr auto net = models::resnet18(64, 10);
constexpr training plan{.batch = 8, .model_allocator = true};
constexpr training expandable{.batch = 8, .model_allocator = true, .allocator = {.expandable_segments = true}};
}  // namespace

TEST_CASE("max_micro_batch_of replays each probe step by step and answers as max_micro_batch", "[budget_of]") {
  // on 20 % of a T4 (3.2 GB) the capped allocator decides: its answer fits, the next batch does not
  constexpr auto split = max_micro_batch_of<net, plan, devices::t4, batch_bounds{}, 20>();
  CHECK(split == max_micro_batch(net, plan, devices::t4, {}, 20));
  CHECK(split > 8);
  constexpr auto split_expandable = max_micro_batch_of<net, expandable, devices::t4, batch_bounds{}, 20>();
  CHECK(split_expandable == max_micro_batch(net, expandable, devices::t4, {}, 20));
}

TEST_CASE("budget_totals_of's answer at the search's edge: the capped run fits at the answer, not one above", "[budget_of]") {
  constexpr auto answer = max_micro_batch_of<net, plan, devices::t4, batch_bounds{}, 20>();
  device fifth = devices::t4;
  fifth.capacity = devices::t4.capacity / 5;
  training at = plan;
  at.batch = answer;
  CHECK(fits(budget_totals(net, at, fifth)));
  at.batch = answer + 1;
  CHECK_FALSE(fits(budget_totals(net, at, fifth)));
}
