// The seed reports' numbers that follow from their sizes, and the planner's answers for each
// seed's failing configuration (the same scenarios as the examples named in each section).
// Size arithmetic is checked at compile time; budgets of the full-size models and the planner
// run at run time (Clang's 1M-step constexpr limit admits one simulated micro-batch of them).
#include <catch2/catch.hpp>
#include <gpubudget/models/seed_variants.hpp>
#include <gpubudget/models/seeds.hpp>
#include <gpubudget/planner.hpp>

#include <string>

using namespace gpubudget;

namespace {
// --- seed 000 (examples/bev_unfold_vs_depthwise.cpp) -------------------------------------------------
// F.unfold of [B, C, 256, 256] with K = 7: B·C·49·65536 fp32 values; 98 GiB ⇔ B·C = 8192.
static_assert(unfold_bytes(4, 512, 7, 256 * 256, dtype::fp32) == std::int64_t{4} * 512 * 49 * 65536 * 4);
static_assert(unfold_bytes(4, 512, 7, 256 * 256, dtype::fp32) == 26'306'674'688);  // 24.50 GiB
static_assert(unfold_bytes(1, 8192, 7, 256 * 256, dtype::fp32) == 98 * GiB);
static_assert(4 * unfold_bytes(4, 512, 7, 256 * 256, dtype::fp32) == 98 * GiB);  // broadcast over 4 heads
static_assert(unfold_bytes(2, 512, 7, 256 * 256, dtype::fp32) == 26'306'674'688 / 2);  // linear in the batch

// --- seed 001 (examples/dual_vit_pairwise_attention.cpp) ---------------------------------------------
static_assert(patch_tokens(448, 448, 16, true) == 785);
static_assert(2 * patch_tokens(448, 448, 16, true) == 1570);
static_assert(score_matrix_bytes(8, 12, 785, 1570, dtype::fp32) == 473'260'800);  // "~470MB"
static_assert(score_matrix_bytes(4, 12, 785, 1570, dtype::fp32) == 473'260'800 / 2);
static_assert(score_matrix_bytes(8, 12, 785, 1570, dtype::fp16) == 473'260'800 / 2);
// Effective batch 16: 8 x 2 before, 4 x 4 after, 2 x 8 as the report's fallback.
static_assert(training{.batch = 16, .micro_batch = 8}.accumulation_steps() == 2);
static_assert(training{.batch = 16, .micro_batch = 4}.accumulation_steps() == 4);
static_assert(training{.batch = 16, .micro_batch = 2}.accumulation_steps() == 8);

constexpr auto bev(local_attention_impl impl, std::int64_t layers) { return models::bev_local_attention_n(impl, layers, 512, 256, 4, 7); }
constexpr auto dual_vit = models::dual_vit_paths<12>(448, 200);
constexpr auto student = models::gat_graph(40, 100, 20000, 64, 4, 32);
constexpr auto teacher_net = models::gat_graph(40, 100, 20000, 512, 8, 256);
constexpr training amp_b(std::int64_t batch) { return training{.batch = batch, .precision = amp_fp16}; }

// AdamW: 2 fp32 states per trainable parameter, at compile time on the small reference sizes.
constexpr auto bev_small = budget_totals(models::bev_local_attention<2>(local_attention_impl::unfold), training{.batch = 1}, devices::t4);
static_assert(bev_small.optimizer_state == 2 * 4 * bev_small.trainable_count);
constexpr auto gat_small = budget_totals(student, training{.batch = 1}, devices::t4);
static_assert(gat_small.optimizer_state == 2 * 4 * gat_small.trainable_count);
static_assert(budget_totals(student, training{.batch = 1, .optimizer = sgd_momentum}, devices::t4).optimizer_state == 4 * gat_small.trainable_count);
static_assert(gat_small.parameter_count == 20000 * 64 + (64 * 128 + 2 * 128) + (128 * 128 + 2 * 128) + (128 * 2 + 2));
}  // namespace

TEST_CASE("seed 000: unfold vs depthwise on a 32 GB card") {
  const auto& gpu = devices::v100_32gb;
  const auto before = budget_totals(bev(local_attention_impl::unfold, 3), training{.batch = 4}, gpu);
  const auto after = budget_totals(bev(local_attention_impl::depthwise, 2), training{.batch = 2}, gpu);
  REQUIRE_FALSE(fits(before));
  REQUIRE(fits(after));
  REQUIRE(before.optimizer_state == 2 * 4 * before.trainable_count);
  // the engine's unfold layer saves both unfolded tensors (k and v) of every layer: at least
  // 2 × 3 × 24.5 GiB
  REQUIRE(before.saved_activations > 6 * unfold_bytes(4, 512, 7, 65536, dtype::fp32));

  const plan_constraints c{.keep_effective_batch = true, .keep_architecture = false};
  const auto u3 = variant("unfold, 3 layers", bev(local_attention_impl::unfold, 3));
  const auto u2 = variant("unfold, 2 layers", bev(local_attention_impl::unfold, 2));
  const auto d3 = variant("depthwise, 3 layers", bev(local_attention_impl::depthwise, 3));
  const auto d2 = variant("depthwise, 2 layers", bev(local_attention_impl::depthwise, 2));
  const auto plans = plan_fit_family<16>(training{.batch = 4}, gpu, c, u3, u2, d3, d2);
  // Under AMP the unfold's softmax runs in fp32 (autocast's fp32 op list, the shared
  // softmax rule): keeping the 3-layer unfold at micro-batch 1 with AMP no longer fits; keeping
  // it takes checkpointing, or 2 layers with AMP.
  REQUIRE(plans.count == 4);
  const auto best = plans.best();
  REQUIRE(best.member == 2);  // depthwise, 3 layers: no capacity lost, batch 4 kept
  REQUIRE(best.plan.batch == 4);
  REQUIRE(best.plan.micro() == 4);
  REQUIRE(best.cost == 0);
  REQUIRE(plans.plans[1].member == 3);  // depthwise, 2 layers at batch 4
  REQUIRE(plans.plans[2].member == 0);  // keeping the unfold: micro-batch 1 and checkpointing
  REQUIRE(plans.plans[2].plan.micro() == 1);
  REQUIRE(plans.plans[2].plan.checkpoint_blocks);
  REQUIRE(plans.plans[3].member == 1);  // 2 unfold layers, micro-batch 1 with AMP
  REQUIRE(plans.plans[3].plan.precision == precision_mode::amp_fp16);
  // the report's choice: depthwise, 2 layers, batch 2 (effective batch halved)
  const auto report = score_plan(training{.batch = 4}, training{.batch = 2}, 3, gpu, c, u3, u2, d3, d2);
  REQUIRE(report.fits);
  REQUIRE(report.cost > plans.plans[plans.count - 1].cost);
  REQUIRE(has(report.remedies, remedy::smaller_batch));
}

TEST_CASE("seed 001: dual ViT, effective batch 16 on a 16 GB card") {
  const auto& gpu = devices::generic_16gb;
  const training before{.batch = 16, .micro_batch = 8, .precision = amp_fp16};
  const training after{.batch = 16, .micro_batch = 4, .precision = amp_fp16, .checkpoint_blocks = true};
  const auto engine = budget_totals(models::dual_vit_pwca(448, 200), before, gpu);
  const auto paths = budget_totals(dual_vit, before, gpu);
  REQUIRE_FALSE(fits(engine));
  REQUIRE_FALSE(fits(paths));
  REQUIRE(paths.parameter_count == engine.parameter_count);
  REQUIRE(paths.parameter_count == 86'404'040);
  // the composable model tracks the engine's record within 1 %
  REQUIRE(paths.total() * 100 < engine.total() * 101);
  REQUIRE(paths.total() * 100 > engine.total() * 99);
  const auto fixed = budget_totals(dual_vit, after, gpu);
  REQUIRE(fits(fixed));
  REQUIRE(fixed.plan.micro() * fixed.plan.accumulation_steps() == 16);
  REQUIRE(fixed.optimizer_state == 2 * 4 * fixed.trainable_count);
  // AMP does not halve this model: the fp32 softmax outputs it keeps make it larger
  REQUIRE(budget_totals(dual_vit, training{.batch = 16, .micro_batch = 8}, gpu).total() < paths.total());

  const plan_constraints c{};
  const auto plans = plan_fit<16>(dual_vit, before, gpu, c);
  REQUIRE(plans.count == 3);
  REQUIRE(plans.best().plan.batch == 16);
  REQUIRE(plans.best().plan.micro() == 2);  // micro-batch 2 x 8 accumulation
  REQUIRE(plans.best().remedies == remedy::accumulation);
  REQUIRE(plans.best().cost == 120);
  const auto& ckpt = plans.plans[2];
  REQUIRE(ckpt.plan.checkpoint_blocks);
  REQUIRE(ckpt.plan.micro() == 8);  // checkpointing alone suffices at micro-batch 8
  REQUIRE(ckpt.recompute_permille > 320);
  const auto report = score_plan(dual_vit, before, after, gpu, c);
  REQUIRE(report.fits);
  REQUIRE(report.cost == ckpt.cost + 2 * 20);
}

TEST_CASE("seed 002: graphs per batch at 70 %, context 500 MB, fragmentation 10 %") {
  const auto report_gpu = custom_device("16000 MB GPU", 16000 * MB, 500 * MB);
  const auto small_gpu = custom_device("8 GB GPU", 8 * GB, 500 * MB);
  const training kd{.batch = 1};
  REQUIRE(kd.fragmentation_percent == 10);
  REQUIRE(max_micro_batch_distilled(student, teacher_net, false, kd, report_gpu, {32, 4096}, 70) == 4096);
  const auto on = max_micro_batch_distilled(student, teacher_net, false, kd, small_gpu, {32, 4096}, 70);
  const auto off = max_micro_batch_distilled(student, teacher_net, true, kd, small_gpu, {32, 4096}, 70);
  REQUIRE(on == 1979);
  REQUIRE(off == on);  // the teacher's forward is the peak: offloading cannot lower it
  REQUIRE(max_micro_batch(student, kd, small_gpu, {1, 1 << 20}, 70) == 11004);

  training failing{.batch = 4096};
  failing.teacher = teacher(teacher_net, 4096, false);
  const plan_constraints c{.utilization_percent = 70};
  const auto plans = plan_fit<16>(student, failing, small_gpu, c);
  REQUIRE_FALSE(plans.configured.fits);
  REQUIRE(plans.count == 1);
  REQUIRE(plans.best().plan.batch == 4096);
  REQUIRE(plans.best().plan.micro() == 1024);
  REQUIRE(plans.best().cost == 60);
  training offloaded = failing;
  offloaded.teacher.offloaded_to_cpu = true;
  REQUIRE_FALSE(score_plan(student, failing, offloaded, small_gpu, c).fits);
}

TEST_CASE("seed 003: two-stage fine-tuning, phase by phase on a T4") {
  namespace ph = models::finetune_phase;
  const auto net = models::finetune_standin(384);
  const auto& gpu = devices::t4;
  auto at = [](const char* train_only, std::int64_t batch, bool ckpt = false) {
    return training{.batch = batch, .precision = amp_fp16, .optimizer = adamw, .ema = true, .checkpoint_blocks = ckpt, .train_only = train_only};
  };
  const auto s1 = budget_totals(net, at(ph::stage1, 64), gpu);
  const auto p1 = budget_totals(net, at(ph::phase1, 64), gpu);
  const auto p2 = budget_totals(net, at(ph::phase2, 64), gpu);
  const auto s2 = budget_totals(net, at(ph::stage2, 64), gpu);
  REQUIRE(fits(s1));
  REQUIRE(fits(p1));
  REQUIRE(fits(p2));
  REQUIRE_FALSE(fits(s2));
  REQUIRE(fits(budget_totals(net, at(ph::stage2, 32), gpu)));
  REQUIRE(fits(budget_totals(net, at(ph::stage2, 64, true), gpu)));
  for (const auto* b : {&s1, &p1, &p2, &s2}) REQUIRE(b->optimizer_state == 2 * 4 * b->trainable_count);
  REQUIRE(s1.trainable_count == 2'245'970);   // the decoder
  REQUIRE(s2.trainable_count == 30'064'562);  // everything
  REQUIRE(s1.parameter_count - s1.trainable_count == 27'818'592);  // ConvNeXt-T's features
  REQUIRE(s2.ema == 4 * s2.parameter_count);

  const plan_constraints c{.keep_effective_batch = false, .train_only = {ph::phase1, ph::phase2}};
  const auto plans = plan_fit<16>(net, at(ph::stage2, 64), gpu, c);
  // seven fitting plans under issue F's CUDA op rules (six before: less kept per step)
  REQUIRE(plans.count == 7);
  REQUIRE(plans.best().plan.micro() == 32);
  REQUIRE(plans.best().plan.batch == 64);
  REQUIRE(plans.best().cost == 20);
  REQUIRE(std::string(plans.plans[1].plan.train_only) == ph::phase2);
  REQUIRE(plans.plans[1].lost_capacity_permille == 42);
  const auto report = score_plan(net, at(ph::stage2, 64), at(ph::phase1, 32, true), gpu, c);
  REQUIRE(report.fits);
  REQUIRE(has(report.remedies, remedy::freeze | remedy::smaller_batch | remedy::checkpoint_blocks));
}

TEST_CASE("seed 004: 64/128/256 at batch 20 vs 32/64/128 at batch 16, 5 frames, T4") {
  // the inferred frame (examples/temporal_cnn_checkpointing.cpp): 448, since the CUDA profile
  // takes PyTorch 2.x's rules (416 under 1.13's; op_rules.md 2.6 #3, #21)
  constexpr std::int64_t frame = 448;
  const auto full = models::temporal_cnn_transformer<5>(64, 128, 256, frame, 2, 4, false);
  const auto ckpt = models::temporal_cnn_transformer<5>(64, 128, 256, frame, 2, 4, true);
  const auto small = models::temporal_cnn_transformer<5>(32, 64, 128, frame, 2, 4, false);
  const auto& gpu = devices::t4;
  const auto before = budget_totals(full, amp_b(20), gpu);
  REQUIRE_FALSE(fits(before));
  REQUIRE(fits(budget_totals(models::temporal_cnn_transformer<5>(64, 128, 256, frame - 32, 2, 4, false), amp_b(20), gpu)));
  REQUIRE(fits(budget_totals(ckpt, amp_b(20), gpu)));
  REQUIRE(fits(budget_totals(small, amp_b(16), gpu)));
  REQUIRE(before.parameter_count == 1'951'489);
  REQUIRE(before.optimizer_state == 2 * 4 * before.trainable_count);

  const plan_constraints c{.keep_architecture = false};
  const auto plans = plan_fit_family<16>(amp_b(20), gpu, c, variant("64/128/256", full),
                                         variant("per-frame checkpointing", ckpt, remedy::checkpoint_blocks), variant("32/64/128", small));
  REQUIRE(plans.count == 3);
  REQUIRE(plans.best().plan.micro() == 10);
  REQUIRE(plans.best().cost == 20);
  REQUIRE(plans.plans[1].member == 1);  // the report's per-frame checkpointing, batch 20
  REQUIRE(plans.plans[1].plan.micro() == 20);
  REQUIRE(plans.plans[1].recompute_permille == 333);
  REQUIRE(plans.plans[2].member == 2);  // the smaller model
  REQUIRE(plans.plans[2].lost_capacity_permille == 749);
}
