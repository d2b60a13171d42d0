// The fit planner (planner.hpp): compile-time answers on small models, the search's guarantees
// (every plan fits, cheapest first, constraints respected, no dominated plans), the cost model,
// and the table.
#include <catch2/catch.hpp>
#include <gpubudget/planner.hpp>
#include <gpubudget/report.hpp>

#include <string>

using namespace gpubudget;

namespace {
// A small CNN: 64 images of 64² need ~1019 MiB, a 1 GB card (200 MB context) holds ~954 MiB.
constexpr auto cnn = sequential(input(3, 64, 64), conv2d(32, 3, padding(1)), batch_norm(), relu(),
                                repeat<4>(residual(conv2d(32, 3, padding(1)), batch_norm(), relu())), adaptive_avg_pool2d(1, 1),
                                flatten(), linear(10));
constexpr device one_gb = custom_device("1 GB", 1 * GB, 200 * MB);
constexpr training b64{.batch = 64};

// --- at compile time ---------------------------------------------------------------------------------
constexpr auto plans = plan_fit(cnn, b64, one_gb);
static_assert(!plans.configured.fits);
static_assert(plans.any() && plans.best().fits);
static_assert(best_plan(cnn, b64, one_gb).fits);
static_assert(plans.best().plan.batch == 64);  // keep_effective_batch is the default
// Cheapest: AMP bf16 (5 permille; the custom device's compute capability is unknown, so bf16 is offered).
static_assert(plans.best().plan.precision == precision_mode::amp_bf16);
static_assert(plans.best().cost == 5);
// Without AMP and checkpointing: accumulation, micro-batch 32 x 2 (one extra step, 20 permille).
constexpr auto accumulate_only = best_plan(cnn, b64, one_gb, plan_constraints{.allowed = remedy::accumulation});
static_assert(accumulate_only.fits && accumulate_only.plan.micro() == 32 && accumulate_only.plan.accumulation_steps() == 2);
static_assert(accumulate_only.extra_steps == 1 && accumulate_only.cost == 20);
static_assert(accumulate_only.remedies == remedy::accumulation);
// Nothing allowed: nothing fits.
static_assert(!best_plan(cnn, b64, one_gb, plan_constraints{.allowed = remedy::none}).fits);
// A configuration that fits is its own plan, at no cost.
constexpr auto fits_already = plan_fit(cnn, training{.batch = 8}, one_gb);
static_assert(fits_already.count == 1 && fits_already.best().cost == 0 && fits_already.best().remedies == remedy::none);

// The remedy set type.
static_assert(has(remedy::amp | remedy::freeze, remedy::amp));
static_assert(!has(remedy::amp, remedy::freeze));
static_assert(!has(remedy::all, remedy::none));
static_assert(has(~remedy::amp, remedy::freeze) && !has(~remedy::amp, remedy::amp));

// FLOPs: a linear layer is 2·in·out per row; a conv 2·(C_in/groups)·k²·outputs.
static_assert(forward_flops(linear(256), make_shape(10, 128), make_shape(10, 256)) == 2 * 128 * 256 * 10);
static_assert(forward_flops(conv2d(32, 3, padding(1)), make_shape(16, 8, 8), make_shape(32, 8, 8)) == 2 * 16 * 9 * 32 * 64);
static_assert(forward_flops(depthwise_conv2d(7, padding(3)), make_shape(16, 8, 8), make_shape(16, 8, 8)) == 2 * 1 * 49 * 16 * 64);

// Checkpointing the whole network re-runs its whole forward once: a third of a step.
constexpr auto mlp = sequential(input(512), named("body", sequential(linear(2048), gelu(), linear(512))), named("head", linear(10)));
constexpr auto mlp_profile = profile_of(mlp, one_gb);
static_assert(mlp_profile.with_all == mlp_profile.total);
static_assert(mlp_profile.with_blocks == 0);  // no repeat(...)
static_assert(mlp_profile.as_declared == 0);
}  // namespace

TEST_CASE("every plan fits, the list is ordered by cost, the configured record does not fit") {
  const auto p = plan_fit(cnn, b64, one_gb, plan_constraints{.keep_effective_batch = false});
  REQUIRE(p.count >= 4);
  REQUIRE_FALSE(p.configured.fits);
  for (std::size_t k = 0; k < p.count; ++k) {
    const auto& r = p.plans[k];
    REQUIRE(r.fits);
    // re-simulating the plan gives the recorded total, within the device's capacity
    const auto b = budget_totals(cnn, r.plan, one_gb);
    REQUIRE(b.total() == r.total);
    REQUIRE(fits(b));
    if (k > 0) REQUIRE(p.plans[k - 1].cost <= r.cost);
    REQUIRE(r.cost == r.recompute_permille + 20 * r.extra_steps + r.lost_capacity_permille + r.penalty_permille);
  }
}

TEST_CASE("keep_effective_batch keeps plan.batch; without it a smaller batch costs its lost share") {
  const auto keep = plan_fit(cnn, b64, one_gb, plan_constraints{.allowed = remedy::accumulation | remedy::smaller_batch});
  REQUIRE(keep.count == 1);
  REQUIRE(keep.best().plan.batch == 64);
  REQUIRE(keep.best().plan.micro() == 32);

  const auto shrink = plan_fit(cnn, b64, one_gb, plan_constraints{.keep_effective_batch = false, .allowed = remedy::smaller_batch});
  REQUIRE(shrink.count == 1);
  const auto& r = shrink.best();
  REQUIRE(r.plan.batch < 64);
  REQUIRE(r.plan.micro() == r.plan.batch);  // no accumulation
  REQUIRE(r.remedies == remedy::smaller_batch);
  REQUIRE(r.lost_capacity_permille == 1000 - r.plan.batch * 1000 / 64);
  // the largest batch that fits: one more does not
  REQUIRE(fits(budget_totals(cnn, training{.batch = r.plan.batch}, one_gb)));
  REQUIRE_FALSE(fits(budget_totals(cnn, training{.batch = r.plan.batch + 1}, one_gb)));
}

TEST_CASE("accumulation picks the largest divisor of the effective batch that fits") {
  // micro-batches of 48 do not divide 64; 32 is the largest divisor below 64 and it fits
  const auto p = best_plan(cnn, training{.batch = 64}, one_gb, plan_constraints{.allowed = remedy::accumulation});
  REQUIRE(p.plan.micro() == 32);
  // on a smaller card the answer is smaller, and still the largest that fits
  const auto small = custom_device("600 MB", 600 * MB, 200 * MB);
  const auto q = best_plan(cnn, training{.batch = 64}, small, plan_constraints{.allowed = remedy::accumulation});
  REQUIRE(q.fits);
  REQUIRE(64 % q.plan.micro() == 0);
  REQUIRE_FALSE(fits(budget_totals(cnn, training{.batch = 64, .micro_batch = 2 * q.plan.micro()}, small)));
}

TEST_CASE("plans are not dominated: no kept plan has a subset of another's changes at a larger micro-batch for less") {
  const auto p = plan_fit(cnn, b64, one_gb);
  // AMP fits at micro 64: no plan adds anything to AMP alone
  for (const auto& r : p) {
    if (r.plan.precision != fp32) REQUIRE((r.remedies == remedy::amp));
  }
}

TEST_CASE("checkpointing costs its recomputed share of the forward") {
  const auto p = best_plan(cnn, b64, one_gb, plan_constraints{.allowed = remedy::checkpoint_blocks});
  REQUIRE(p.fits);
  REQUIRE(p.plan.checkpoint_blocks);
  // the four repeated convs are ~97 % of the forward FLOPs; a step is ~3 forwards
  REQUIRE(p.recompute_permille > 300);
  REQUIRE(p.recompute_permille < 334);
  const auto prof = profile_of(cnn, one_gb);
  REQUIRE(p.recompute_permille == prof.with_blocks * 1000 / (3 * prof.total));
}

TEST_CASE("bf16 autocast is offered only where the device supports it") {
  device t4_like = one_gb, a100_like = one_gb;
  t4_like.compute_capability = 75;
  a100_like.compute_capability = 80;
  const auto on_t4 = plan_fit(cnn, b64, t4_like, plan_constraints{.allowed = remedy::amp});
  const auto on_a100 = plan_fit(cnn, b64, a100_like, plan_constraints{.allowed = remedy::amp});
  REQUIRE(on_t4.count == 1);
  REQUIRE(on_t4.best().plan.precision == precision_mode::amp_fp16);
  REQUIRE(on_a100.count == 2);
  REQUIRE(on_a100.best().plan.precision == precision_mode::amp_bf16);
}

TEST_CASE("freezing: train_only candidates, lost capacity = frozen share of the trainable parameters") {
  constexpr auto big = sequential(input(1024), named("body", sequential(linear(8192), gelu(), linear(8192), gelu(), linear(1024))),
                                  named("head", linear(1000)));
  const auto dev = custom_device("1.5 GB", 1500 * MB, 200 * MB);
  const training base{.batch = 8};
  REQUIRE_FALSE(fits(budget_totals(big, base, dev)));
  const auto p = plan_fit(big, base, dev, plan_constraints{.allowed = remedy::freeze, .train_only = {"head"}});
  REQUIRE(p.count == 1);
  const auto& r = p.best();
  REQUIRE(std::string(r.plan.train_only) == "head");
  REQUIRE(r.remedies == remedy::freeze);
  REQUIRE(r.trainable_count == 1024 * 1000 + 1000);
  REQUIRE(r.lost_capacity_permille == 1000 - r.trainable_count * 1000 / p.configured.trainable_count);
  // the optimizer change also fits, at its fixed penalty
  const auto q = plan_fit(big, base, dev, plan_constraints{.allowed = remedy::optimizer});
  REQUIRE(q.count == 1);
  REQUIRE(q.best().plan.optimizer == optimizer_kind::sgd_momentum);
  REQUIRE(q.best().penalty_permille == 250);
}

TEST_CASE("teacher offload helps when the teacher's weights, not its forward, decide") {
  // A wide teacher on tiny inputs: 71M parameters (271 MiB), a small forward.
  constexpr auto teacher_net = sequential(input(256), linear(8192), gelu(), linear(8192), gelu(), linear(256));
  const auto dev = custom_device("1 GB", 1 * GB, 200 * MB);
  training base{.batch = 48};
  base.teacher = teacher(teacher_net, 48, false);
  REQUIRE_FALSE(fits(budget_totals(cnn, base, dev)));
  const auto p = best_plan(cnn, base, dev, plan_constraints{.allowed = remedy::teacher_offload});
  REQUIRE(p.fits);
  REQUIRE(p.plan.teacher.offloaded_to_cpu);
  REQUIRE(p.penalty_permille == 150);
}

TEST_CASE("families: keep_architecture admits only checkpointing members; lost capacity from parameters and input") {
  constexpr auto wide = sequential(input(3, 64, 64), conv2d(64, 3, padding(1)), batch_norm(), relu(),
                                   repeat<4>(residual(conv2d(64, 3, padding(1)), batch_norm(), relu())), adaptive_avg_pool2d(1, 1),
                                   flatten(), linear(10));
  constexpr auto narrow = cnn;
  auto ckpt = wide;
  ckpt.records[5].flags.checkpoint = true;  // the repeat, declared checkpointed in the model
  const training base{.batch = 64};
  const plan_constraints keep{.allowed = remedy::model_variant | remedy::checkpoint_blocks};
  const auto same_arch = plan_fit_family<8>(base, one_gb, keep, variant("wide", wide), variant("wide, checkpointed", ckpt, remedy::checkpoint_blocks),
                                            variant("narrow", narrow));
  REQUIRE_FALSE(same_arch.configured.fits);
  for (const auto& r : same_arch) REQUIRE(r.member != 2);
  plan_constraints free = keep;
  free.keep_architecture = false;
  const auto any_arch = plan_fit_family<8>(base, one_gb, free, variant("wide", wide), variant("wide, checkpointed", ckpt, remedy::checkpoint_blocks),
                                           variant("narrow", narrow));
  bool saw_narrow = false;
  for (const auto& r : any_arch) {
    if (r.member != 2) continue;
    saw_narrow = true;
    const auto pw = budget_totals(wide, base, one_gb).parameter_count, pn = budget_totals(narrow, base, one_gb).parameter_count;
    REQUIRE(r.lost_capacity_permille == 1000 - pn * 1000 / pw);
    REQUIRE(has(r.remedies, remedy::model_variant));
  }
  // narrow does not fit 64 either (1019 MiB): the family member may still need a smaller micro-batch
  REQUIRE((saw_narrow || !fits(budget_totals(narrow, base, one_gb))));
}

TEST_CASE("score_plan scores a hand-picked configuration like the search does") {
  const auto p = plan_fit(cnn, b64, one_gb, plan_constraints{.allowed = remedy::accumulation});
  const auto s = score_plan(cnn, b64, training{.batch = 64, .micro_batch = 32}, one_gb);
  REQUIRE(s.fits);
  REQUIRE(s.cost == p.best().cost);
  REQUIRE(s.total == p.best().total);
  REQUIRE(describe_changes(s, b64) == "micro-batch 32 x 2 accumulation");
}

TEST_CASE("limits: capacity and simulation cap are reported") {
  const auto one = plan_fit<1>(cnn, b64, one_gb, plan_constraints{.keep_effective_batch = false});
  REQUIRE(one.count == 1);
  REQUIRE(one.truncated);
  REQUIRE(one.best().cost == plan_fit(cnn, b64, one_gb).best().cost);  // the cheapest survives
  const auto capped = plan_fit(cnn, b64, one_gb, plan_constraints{.max_simulations = 3});
  REQUIRE(capped.truncated);
  REQUIRE(capped.simulations <= 4);
}

TEST_CASE("max_micro_batch_distilled: the answer fits and one more does not") {
  // a teacher whose no-grad forward (512 channels at 64²) outgrows the student's step
  constexpr auto teacher_net = sequential(input(3, 64, 64), conv2d(512, 3, padding(1)), relu(), conv2d(64, 3, padding(1)), relu(),
                                          adaptive_avg_pool2d(1, 1), flatten(), linear(10));
  const training base{.batch = 1};
  const auto n = max_micro_batch_distilled(cnn, teacher_net, false, base, one_gb, {1, 1024});
  REQUIRE(n > 1);
  REQUIRE(n < 1024);
  auto at = [&](std::int64_t b) {
    training t{.batch = b};
    t.teacher = teacher(teacher_net, b, false);
    return fits(budget_totals(cnn, t, one_gb));
  };
  REQUIRE(at(n));
  REQUIRE_FALSE(at(n + 1));
  // without a teacher the student takes more
  REQUIRE(max_micro_batch(cnn, base, one_gb, {1, 1024}) > n);
}

TEST_CASE("plan_table prints the configuration, every plan and extra rows") {
  const auto p = plan_fit(cnn, b64, one_gb);
  const auto text = plan_table(p, {{"mine", score_plan(cnn, b64, training{.batch = 64, .micro_batch = 16}, one_gb)}});
  REQUIRE(text.find("| Rank | Change |") != std::string::npos);
  REQUIRE(text.find("| configured | as configured | 64 x 1 |") != std::string::npos);
  REQUIRE(text.find("| 1 | AMP bf16 |") != std::string::npos);
  REQUIRE(text.find("| mine | micro-batch 16 x 4 accumulation |") != std::string::npos);
}
