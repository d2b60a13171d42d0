// Per-rank budgets (distributed.hpp) at run time: layout errors, the solvers' answers on
// Llama-2-7B, components adding up, and Megatron's closed-form activation figures.
#include <catch2/catch.hpp>
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>
#include <gpubudget/models/transformers.hpp>

#include <stdexcept>

using namespace gpubudget;

namespace {
constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
const step_facts llama7 = rank_facts(models::llama(models::llama2_7b(2048)), per_gpu, devices::a100_40gb);

std::int64_t sum_of_components(const rank_budget& r) {
  std::int64_t s = 0;
  for (const auto& c : rank_components(r)) s += c.bytes;
  return s;
}
}  // namespace

TEST_CASE("bad layouts are named errors") {
  auto err = [](const parallel_layout& l) {
    try {
      (void)per_rank(llama7, l);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err(zero(4, 8)) == "gpubudget: ZeRO stage must be 0, 1, 2 or 3");
  CHECK(err(ddp(8)).find("no error") == 0);
  CHECK(err(parallel_layout{.world_size = 8, .offload = {true, false}}).find("offload needs DeepSpeed ZeRO or FSDP") != std::string::npos);
  CHECK(err(zero(2, 8, {false, true})).find("stage 3 only") != std::string::npos);
  CHECK(err(fsdp(fsdp_strategy::full_shard, 8, {true, false})).find("not the optimizer alone") != std::string::npos);
  CHECK(err(fsdp(fsdp_strategy::hybrid_shard, 8, {}, 3)).find("HYBRID_SHARD") != std::string::npos);
  CHECK(err(parallel_layout{.world_size = 6, .tensor_parallel = 4}).find("not divisible by tensor") != std::string::npos);
  CHECK(err(parallel_layout{.world_size = 0}).find("must be positive") != std::string::npos);
  // GPT-2 small: 12 heads, 12 layers. Llama-2-7B: 32 heads, FFN 11008 = 2^8 · 43, 32 layers.
  const auto gpt2 = rank_facts(models::gpt(models::gpt2_small(256)), per_gpu, devices::a100_40gb);
  CHECK(gpt2.split.layers == 12);
  CHECK(gpt2.split.tp_divides == 12);
  CHECK(llama7.split.layers == 32);
  CHECK(llama7.split.tp_divides == 32);
  CHECK_THROWS_WITH(per_rank(gpt2, parallel_layout{.world_size = 8, .tensor_parallel = 8}), Catch::Contains("does not divide the attention heads"));
  CHECK_NOTHROW(per_rank(gpt2, parallel_layout{.world_size = 12, .tensor_parallel = 4}));
  CHECK_THROWS_WITH(per_rank(llama7, parallel_layout{.world_size = 3, .tensor_parallel = 3}), Catch::Contains("does not divide the attention heads"));
  CHECK_THROWS_WITH(per_rank(gpt2, parallel_layout{.world_size = 16, .pipeline_parallel = 16}), Catch::Contains("larger than the layer count"));
}

TEST_CASE("a rank's components add up to its total, for every candidate layout") {
  for (const auto& c : rank_layouts(llama7, 16)) {
    if (!c.valid) continue;
    CHECK(sum_of_components(c.budget) == c.budget.total());
  }
}

TEST_CASE("Llama-2-7B, pure bf16 AdamW, 2048 tokens per GPU on A100 40GB") {
  // The single GPU needs ~166 GiB; ZeRO-1/2 keep 4 bytes/parameter unsharded and do not fit on 8.
  CHECK(!fits(llama7.single));
  CHECK(!fits_per_rank(per_rank(llama7, zero(2, 8))));
  CHECK(fits_per_rank(per_rank(llama7, zero(2, 8, {true, false}))));
  CHECK(fits_per_rank(per_rank(llama7, zero(3, 8))));
  // Smallest world sizes (model states shrink with N; activations of one sequence do not).
  CHECK(min_gpus(llama7, zero(3, 1)) == 6);
  CHECK(min_gpus(llama7, fsdp(fsdp_strategy::full_shard, 1)) == 6);
  // ZeRO-2 partitions the 16-bit gradients: 16 GPUs; counted as DeepSpeed's estimator does (whole
  // gradients: 2 + 2 bytes/param are 25 GiB before activations), never on 40 GB.
  CHECK(min_gpus(llama7, zero(2, 1)) == 16);
  parallel_layout estimator = zero(2, 1);
  estimator.deepspeed.estimator_accounting = true;
  CHECK(min_gpus(llama7, estimator) == 0);
  CHECK(min_gpus(llama7, ddp(1)) == 0);
  // Cheapest on 8: FULL_SHARD and ZeRO-3 both move 3Ψ; FULL_SHARD's rank is smaller (DeepSpeed's
  // default 5e8-element reduce bucket).
  const auto ranked = rank_layouts(llama7, 8);
  CHECK(ranked[0].fits);
  CHECK(ranked[0].layout.engine == sharding::fsdp);
  CHECK(ranked[0].layout.fsdp == fsdp_strategy::full_shard);
  CHECK(ranked[1].layout.engine == sharding::zero);
  CHECK(ranked[1].layout.zero_stage == 3);
  CHECK(cheapest_layout(llama7, 8).fsdp == fsdp_strategy::full_shard);
  // Offloading everything fits even one GPU; an 8 GB card cannot hold one sequence's activations.
  CHECK(cheapest_layout(llama7, 1).offload.parameters);
  const auto small = rank_facts(models::llama(models::llama2_7b(2048)), per_gpu, custom_device("8 GB", 8 * GB));
  CHECK_THROWS_WITH(cheapest_layout(small, 64), Catch::Contains("no parallel layout fits"));
}

TEST_CASE("tensor, sequence and context parallelism split the activations") {
  const auto base = per_rank(llama7, zero(1, 8));
  const auto tp_sp = per_rank(llama7, parallel_layout{.world_size = 8, .engine = sharding::zero, .zero_stage = 1, .tensor_parallel = 8, .sequence_parallel = true});
  const auto tp = per_rank(llama7, parallel_layout{.world_size = 8, .engine = sharding::zero, .zero_stage = 1, .tensor_parallel = 8});
  CHECK(tp_sp.step_peak == (base.step_peak + 7) / 8);
  CHECK(tp.step_peak == (base.step_peak * (10 * 8 + 24) + 34 * 8 - 1) / (34 * 8));
  CHECK(tp_sp.parameters == (base.parameters + 7) / 8);
  const auto cp = per_rank(llama7, parallel_layout{.world_size = 8, .engine = sharding::zero, .zero_stage = 1, .context_parallel = 2});
  CHECK(cp.step_peak == (base.step_peak + 1) / 2);
}

TEST_CASE("Megatron's per-layer activation bytes (Korthikanti et al. 2022, Table 2)") {
  // GPT-3 175B: s = 2048, h = 12288, a = 96, micro-batch 1, t = 8.
  constexpr std::int64_t s = 2048, h = 12288, a = 96;
  CHECK(megatron_layer_activation_bytes(s, 1, h, a, 1, false, false) == s * h * (34 + 5 * a * s / h));  // 2,868,903,936
  CHECK(megatron_layer_activation_bytes(s, 1, h, a, 1, false, false) == 2'868'903'936);
  CHECK(megatron_layer_activation_bytes(s, 1, h, a, 8, true, false) == 2'868'903'936 / 8);
  CHECK(megatron_layer_activation_bytes(s, 1, h, a, 8, true, true) == 34 * s * h / 8);
  CHECK(megatron_layer_activation_bytes(s, 1, h, a, 8, false, false) == s * h * 10 + s * h * (24 + 5 * a * s / h) / 8);
}

TEST_CASE("the op-level model reproduces Korthikanti et al.'s per-layer activations") {
  // A GPT layer (h 1024, 16 heads, s 2048, b 1) with Megatron's dropouts (attention probabilities,
  // both residual branches), 16-bit activations: the saved bytes one more layer adds.
  auto per_layer = [](attention_impl impl, std::int64_t attention_dropout, precision_mode p) {
    auto cfg = [&](std::int64_t layers) { return models::gpt_config{50257, 2048, 1024, layers, 16, 10, 2048, false, attention_dropout, impl}; };
    const training t{.batch = 1, .precision = p, .optimizer = adamw};
    return budget_totals(models::gpt(cfg(5)), t, devices::a100_80gb).saved_activations -
           budget_totals(models::gpt(cfg(4)), t, devices::a100_80gb).saved_activations;
  };
  constexpr std::int64_t s = 2048, h = 1024, a = 16;
  const auto layer_norm_stats = 2 * 2 * s * 4;  // mean and rstd in fp32, for both layer norms
  // Materialized attention, pure fp16: s·b·h·(34 + 5·a·s/h) plus the layer norms' statistics,
  // which the paper leaves out.
  CHECK(per_layer(attention_impl::split_qkv, 10, pure_fp16) == megatron_layer_activation_bytes(s, 1, h, a, 1, false, false) + layer_norm_stats);
  // Flash attention (no a·s² scores, as selective recomputation): 34·s·b·h, plus the statistics,
  // plus what PyTorch keeps that Megatron's count does not: the kernel's own output (the
  // projection saves the contiguous copy of its transpose, a second s·b·h·2 bytes) and its fp32
  // log-sum-exp (a·s·4 bytes).
  CHECK(per_layer(attention_impl::flash, 0, pure_fp16) ==
        megatron_layer_activation_bytes(s, 1, h, a, 1, false, true) + layer_norm_stats + 2 * s * h + 4 * a * s);
  // Under autocast (fp32 parameters) PyTorch keeps more: layer norms, softmax and GELU run on fp32
  // or keep fp32 inputs (autocast's fp32 op list), so the 16-bit paper figure is exceeded by ~42 %.
  const auto amp = per_layer(attention_impl::split_qkv, 10, amp_fp16);
  CHECK(amp > megatron_layer_activation_bytes(s, 1, h, a, 1, false, false) * 14 / 10);
  CHECK(amp < megatron_layer_activation_bytes(s, 1, h, a, 1, false, false) * 15 / 10);
}

TEST_CASE("frozen parameters carry no gradients and no optimizer state on any rank") {
  // Llama-2-7B with only the LM head trained (131,072,000 parameters): ZeRO-2's model states are
  // the 16-bit weights of everything plus the head's gradient partition and optimizer partition.
  training head_only = per_gpu;
  head_only.train_only = "lm_head";
  const auto f = rank_facts(models::llama(models::llama2_7b(2048)), head_only, devices::a100_40gb);
  CHECK(f.params.trainable == 131'072'000);
  const auto r = per_rank(f, zero(2, 8));
  CHECK(r.parameters == 2 * 6'738'415'616);
  CHECK(r.gradients == 2 * 131'072'000 / 8);
  CHECK(r.optimizer_state == 16 * 131'072'000 / 8);
  const auto full = per_rank(llama7, zero(2, 8));
  CHECK(full.optimizer_state == 16 * 6'738'415'616 / 8);
}

TEST_CASE("pipeline stage 0 holds its layers and the input embedding") {
  // Llama-2-7B over 4 stages: (P - E) / 4 + E parameters on stage 0, E = the 32000 x 4096 embedding.
  const auto r = per_rank(llama7, parallel_layout{.world_size = 4, .pipeline_parallel = 4});
  constexpr std::int64_t P = 6'738'415'616, E = 131'072'000;
  CHECK(r.params.total == (P - E + 3) / 4 + E);
  CHECK(r.parameters == 2 * ((P - E + 3) / 4 + E));
  // 1F1B: stage 0 keeps pp micro-batches of L/pp layers, the activations of the whole model for one.
  CHECK(r.step_peak >= llama7.activations);
}

TEST_CASE("interleaved pipelines and short pipelines scale stage 0's activations as Megatron does") {
  const auto plain = per_rank(llama7, parallel_layout{.world_size = 4, .pipeline_parallel = 4});
  // Interleaved with 2 chunks per stage: 1 + (4 - 1) / (4 · 2) = 11/8 of plain 1F1B.
  const auto interleaved = per_rank(llama7, parallel_layout{.world_size = 4, .pipeline_parallel = 4, .virtual_pipeline = 2});
  const auto two_micro = per_rank(llama7, parallel_layout{.world_size = 4, .pipeline_parallel = 4, .micro_batches = 2});
  const auto act = llama7.activations;
  CHECK(detail::rank_activations(act, interleaved.layout) == (act * 11 + 7) / 8);
  CHECK(detail::rank_activations(act, two_micro.layout) == (act * 2 + 3) / 4);
  CHECK(detail::rank_activations(act, plain.layout) == act);
  CHECK(interleaved.step_peak >= plain.step_peak);
}
