// repeat<N> simulates copies 1, 2 and N and stands in for the others with one record: the budget
// must equal that of the same blocks written out one by one (each with its own weights).
#include <catch2/catch.hpp>

#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

namespace {
constexpr auto block = transformer_block(64, heads(4));
constexpr auto rolled = sequential(input(16, 64), repeat<8>(block), mean_over(0), linear(3));
constexpr auto unrolled = sequential(input(16, 64), block, block, block, block, block, block, block, block, mean_over(0), linear(3));
constexpr auto rolled_ckpt = sequential(input(16, 64), repeat<8>(checkpointed(block)), mean_over(0), linear(3));
constexpr auto unrolled_ckpt = sequential(input(16, 64), checkpointed(block), checkpointed(block), checkpointed(block), checkpointed(block),
                                          checkpointed(block), checkpointed(block), checkpointed(block), checkpointed(block), mean_over(0),
                                          linear(3));

void require_same(const memory_budget& a, const memory_budget& b) {
  REQUIRE(a.parameter_count == b.parameter_count);
  REQUIRE(a.saved_activations == b.saved_activations);
  REQUIRE(a.after_forward == b.after_forward);
  REQUIRE(a.forward_peak == b.forward_peak);
  REQUIRE(a.fwd_bwd_peak == b.fwd_bwd_peak);
  REQUIRE(a.step_peak == b.step_peak);
  REQUIRE(a.gradients == b.gradients);
  // The 512 B rounding of the stand-in copies' blocks is carried over exactly in one step; on a
  // later micro-batch the rounded peak can land a few KiB apart (0.03 % of this budget's device
  // total at most), which stays far below any decision the budget makes.
  const auto d = a.allocator_rounding > b.allocator_rounding ? a.allocator_rounding - b.allocator_rounding
                                                             : b.allocator_rounding - a.allocator_rounding;
  REQUIRE(d <= 8 * 1024);
  REQUIRE(a.total() - a.allocator_rounding - a.fragmentation == b.total() - b.allocator_rounding - b.fragmentation);
}
}  // namespace

TEST_CASE("repeat<8> equals eight written-out blocks", "[repeat]") {
  // the T4 has no bf16 arithmetic: these budgets say it is emulated
  for (auto plan : {training{.batch = 4}, training{.batch = 4, .precision = amp_bf16, .emulated_bf16 = true}, training{.batch = 8, .micro_batch = 2},
                    training{.batch = 8, .micro_batch = 2, .precision = amp_bf16, .emulated_bf16 = true}, cpu_reference_step(2, sgd_momentum)}) {
    require_same(budget_totals(rolled, plan, devices::t4), budget_totals(unrolled, plan, devices::t4));
  }
}

TEST_CASE("repeat<8> of checkpointed blocks equals eight written-out checkpointed blocks", "[repeat][checkpoint]") {
  for (auto plan : {training{.batch = 4}, training{.batch = 8, .micro_batch = 4}, cpu_reference_step(2, adamw)}) {
    require_same(budget_totals(rolled_ckpt, plan, devices::t4), budget_totals(unrolled_ckpt, plan, devices::t4));
  }
}
