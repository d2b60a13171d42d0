// Per-rank budgets (distributed.hpp) at run time: layout errors, the solvers' answers on
// Llama-2-7B, components adding up, and Megatron's closed-form activation figures.
#include <catch2/catch.hpp>
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>
#include <gpubudget/models/t5.hpp>
#include <gpubudget/models/transformers.hpp>

#include <algorithm>
#include <array>
#include <vector>
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
  for (const auto& c : rank_layouts(llama7, 16)) {  // over TP x PP too
    if (!c.valid) continue;
    CHECK(sum_of_components(c.budget) == c.budget.total());
  }
}

TEST_CASE("the layouts are enumerated as the planner enumerates its remedies") {
  std::vector<std::array<int, 2>> seen;
  detail::for_each_combination(std::array<int, 2>{2, 1}, [&](const std::array<int, 2>& c) { seen.push_back(c); });
  CHECK(seen == std::vector<std::array<int, 2>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}});
  // DDP; ZeRO-1/2 with and without optimizer offload; ZeRO-3 also with parameter offload; FSDP's
  // four strategies, CPUOffload with all but NO_SHARD; HYBRID_SHARD only over several nodes of 8.
  auto valid = [](const detail::ranking& r) { return std::count_if(r.begin(), r.end(), [](const auto& c) { return c.valid; }); };
  const parallel_layout data_parallel_only{};
  CHECK(valid(rank_layouts(llama7, 16, data_parallel_only)) == 15);
  CHECK(valid(rank_layouts(llama7, 8, data_parallel_only)) == 13);
  // With a model-parallel base every candidate keeps its sizes: TP 2 x 8 data-parallel ranks.
  const auto tp2 = rank_layouts(llama7, 16, parallel_layout{.tensor_parallel = 2, .sequence_parallel = true});
  for (const auto& c : tp2)
    if (c.valid) CHECK(c.layout.data_parallel() == 8);
  CHECK(valid(tp2) == 13);
  CHECK(cheapest_layout(llama7, 16, parallel_layout{.tensor_parallel = 2, .sequence_parallel = true}).tensor_parallel == 2);
}

TEST_CASE("Llama-2-7B, pure bf16 AdamW, 2048 tokens per GPU on A100 40GB") {
  // The single GPU needs ~166 GiB; ZeRO-1/2 keep 4 bytes/parameter unsharded and do not fit on 8.
  CHECK(!fits(llama7.single));
  CHECK(!fits_per_rank(per_rank(llama7, zero(2, 8))));
  CHECK(fits_per_rank(per_rank(llama7, zero(2, 8, {true, false}))));
  CHECK(fits_per_rank(per_rank(llama7, zero(3, 8))));
  // Smallest world sizes (model states shrink with N; activations of one sequence do not).
  CHECK(min_gpus(llama7, zero(3, 1)) == 6);
  // FULL_SHARD: 5 (its unsharded foreach step temporaries are one list in PyTorch 2.x, op_rules.md
  // 2.6 #21; 6 with 1.13's two)
  CHECK(min_gpus(llama7, fsdp(fsdp_strategy::full_shard, 1)) == 5);
  // ZeRO-2 partitions the 16-bit gradients: 12 GPUs (16 with 1.13's two foreach lists); counted
  // as DeepSpeed's estimator does (whole gradients: 2 + 2 bytes/param are 25 GiB before
  // activations), never on 40 GB.
  CHECK(min_gpus(llama7, zero(2, 1)) == 12);
  parallel_layout estimator = zero(2, 1);
  estimator.deepspeed.estimator_accounting = true;
  CHECK(min_gpus(llama7, estimator) == 0);
  CHECK(min_gpus(llama7, ddp(1)) == 0);
  // Cheapest on 8: FULL_SHARD and ZeRO-3 both move 3Ψ; FULL_SHARD's rank is smaller (DeepSpeed's
  // default 5e8-element reduce bucket).
  const parallel_layout data_parallel_only{};
  const auto ranked = rank_layouts(llama7, 8, data_parallel_only);
  CHECK(ranked[0].fits);
  CHECK(ranked[0].layout.engine == sharding::fsdp);
  CHECK(ranked[0].layout.fsdp == fsdp_strategy::full_shard);
  CHECK(ranked[1].layout.engine == sharding::zero);
  CHECK(ranked[1].layout.zero_stage == 3);
  CHECK(cheapest_layout(llama7, 8, data_parallel_only).fsdp == fsdp_strategy::full_shard);
  // Offloading the optimizer state fits even one GPU (the cheapest offload: parameters stay);
  // an 8 GB card cannot hold one sequence's activations without a model-parallel split.
  CHECK(cheapest_layout(llama7, 1).offload.optimizer);
  CHECK(!cheapest_layout(llama7, 1).offload.parameters);
  const auto small = rank_facts(models::llama(models::llama2_7b(2048)), per_gpu, custom_device("8 GB", 8 * GB));
  CHECK_THROWS_WITH(cheapest_layout(small, 64, data_parallel_only), Catch::Contains("no parallel layout fits"));
  // Split by tensor and pipeline parallelism, its ranks fit.
  CHECK(cheapest_layout(small, 64).model_parallel() > 1);
}

TEST_CASE("tensor, sequence and context parallelism split the activations") {
  const auto base = per_rank(llama7, zero(1, 8));
  const auto tp_sp = per_rank(llama7, parallel_layout{.world_size = 8, .engine = sharding::zero, .zero_stage = 1, .tensor_parallel = 8, .sequence_parallel = true});
  const auto tp = per_rank(llama7, parallel_layout{.world_size = 8, .engine = sharding::zero, .zero_stage = 1, .tensor_parallel = 8});
  CHECK(tp_sp.step_peak == (base.step_peak + 7) / 8);
  CHECK(tp.step_peak == (base.step_peak * (10 * 8 + 24) + 34 * 8 - 1) / (34 * 8));
  // Every weight but the norms' (65 x 4096, replicated) is split over the 8 tensor ranks.
  CHECK(tp_sp.parameters == 2 * ((6'738'415'616 - 65 * 4096) / 8 + 65 * 4096));
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
  // plus what PyTorch 2.11 on CUDA keeps that Megatron's count does not: SDPA's fp32 log-sum-exp
  // (a·s·4 bytes) and the cuDNN kernel's philox seed and offset (2 x 8 B). Its output is laid out
  // like q, so the projection keeps it as it is, no copy (op_rules.md CT2-CT4).
  CHECK(per_layer(attention_impl::flash, 0, pure_fp16) ==
        megatron_layer_activation_bytes(s, 1, h, a, 1, false, true) + layer_norm_stats + 4 * a * s + 16);
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

TEST_CASE("pipeline stages: the first holds the embedding, the last the head, each 1/pp of the blocks") {
  // Llama-2-7B over 4 stages: E = the 32000 x 4096 embedding (stage 0) and output layer (stage 3);
  // the norms (65 x 4096) are spread as Megatron's accounting does.
  constexpr std::int64_t P = 6'738'415'616, E = 131'072'000, norms = 65 * 4096;
  const auto l = parallel_layout{.world_size = 4, .pipeline_parallel = 4};
  CHECK(llama7.stages.first_params == E);
  CHECK(llama7.stages.last_params == E);
  CHECK(llama7.stages.norm_params == norms);
  const auto first = per_rank_at_stage(llama7, l, 0), middle = per_rank_at_stage(llama7, l, 1), last = per_rank_at_stage(llama7, l, 3);
  CHECK(first.params.total == (P - 2 * E - norms) / 4 + E + norms / 4);
  CHECK(middle.params.total == (P - 2 * E - norms) / 4 + norms / 4);
  CHECK(last.params.total == first.params.total);
  CHECK(first.parameters == 2 * first.params.total);
  // 1F1B: stage s holds pp - s micro-batches of its quarter of the blocks; stage 0 the embedding's
  // saves for each, the last stage the head's and loss's and the walk's transient peak.
  const auto& st = llama7.stages;
  const auto transient = llama7.activations - st.first_saved - st.last_saved - st.blocks_saved;
  const auto one_block = (st.blocks_saved + 31) / 32;
  CHECK(detail::stage_activations(llama7, l, 0) == st.blocks_saved + 4 * st.first_saved + std::min(transient, one_block));
  CHECK(detail::stage_activations(llama7, l, 2) == (st.blocks_saved * 2 + 3) / 4 + std::min(transient, one_block));
  CHECK(detail::stage_activations(llama7, l, 3) == (st.blocks_saved + 3) / 4 + st.last_saved + transient);
  // The worst rank is the stage needing the most, and every stage is listed by per_rank_at_stage.
  const auto worst = per_rank(llama7, l);
  for (std::int64_t s = 0; s < 4; ++s) CHECK(per_rank_at_stage(llama7, l, s).total() <= worst.total());
  CHECK(worst.pipeline_stage == 0);
  CHECK_THROWS_WITH(per_rank_at_stage(llama7, l, 4), Catch::Contains("pipeline stage must be between"));
}

TEST_CASE("a big vocabulary makes the last pipeline stage the worst rank") {
  // Llama-3-8B (vocabulary 128256) with checkpointed blocks over 8 stages, ZeRO-1 over 2
  // data-parallel ranks: stage 0 keeps 8 micro-batches' block inputs (4 blocks each), stage 7 the
  // 128256 x 4096 output layer and the loss over 128256 fp32 logits per token.
  training ckpt = per_gpu;
  ckpt.checkpoint_blocks = true;
  const auto f = rank_facts(models::llama(models::llama3_8b(4096)), ckpt, devices::a100_80gb);
  constexpr std::int64_t block_input = 4096LL * 4096 * 2;
  // PyTorch 2.x's checkpoint saves each block's positional inputs (NoopSaveInputs, op_rules.md 2.6
  // #18): transformers' hidden state; its RoPE cos/sin pair comes by keyword (held, not saved: L28)
  CHECK(f.stages.blocks_saved == 32 * block_input);
  // a decoder that passes the pair [4096, 128] bf16 positionally saves it once for every block (2.6 #39)
  auto positional = models::llama3_8b(4096);
  positional.positional_layer_inputs = true;
  constexpr std::int64_t rope = 2 * 4096LL * 128 * 2;
  CHECK(rank_facts(models::llama(positional), ckpt, devices::a100_80gb).stages.blocks_saved == 32 * block_input + rope);
  CHECK(f.stages.one_block_saves > 20 * block_input);  // a recomputed block saves ~56 s·b·h
  parallel_layout l = zero(1, 16);
  l.pipeline_parallel = 8;
  // (stage_activations spreads blocks_saved evenly over the 32 blocks)
  CHECK(detail::stage_activations(f, l, 0) == 8 * 4 * block_input + 8 * f.stages.first_saved + f.stages.one_block_saves);
  const auto worst = per_rank(f, l);
  CHECK(worst.pipeline_stage == 7);
  CHECK(worst.total() > per_rank_at_stage(f, l, 0).total());
  // Without checkpointing stage 0's eight micro-batches of saved blocks outweigh the loss.
  CHECK(per_rank(llama7, parallel_layout{.world_size = 8, .pipeline_parallel = 8}).pipeline_stage == 0);
}

TEST_CASE("interleaved pipelines hold Megatron's in-flight chunks, short pipelines fewer micro-batches") {
  const auto plain = parallel_layout{.world_size = 4, .pipeline_parallel = 4};
  // Interleaved, 2 chunks per stage: stage s holds (4 - s - 1)·2 + (2 - 1)·4 + 1 chunks of 1/8 of
  // the blocks; stage 0's 11 chunks are Megatron's penalty 1 + (4 - 1)/(4 · 2) = 11/8 of plain 1F1B.
  const auto interleaved = parallel_layout{.world_size = 4, .pipeline_parallel = 4, .virtual_pipeline = 2};
  CHECK(detail::chunks_in_flight(interleaved, 0) == 11);
  CHECK(detail::chunks_in_flight(interleaved, 3) == 5);
  CHECK(detail::chunks_in_flight(plain, 0) == 4);
  CHECK(detail::chunks_in_flight(plain, 3) == 1);
  const auto two_micro = parallel_layout{.world_size = 4, .pipeline_parallel = 4, .micro_batches = 2};
  CHECK(detail::chunks_in_flight(two_micro, 0) == 2);
  CHECK(detail::chunks_in_flight(two_micro, 3) == 1);
  const auto& st = llama7.stages;
  CHECK(detail::stage_activations(llama7, interleaved, 0) - detail::stage_activations(llama7, plain, 0) ==
        (st.blocks_saved * 11 + 7) / 8 - st.blocks_saved + (st.first_saved * 11 + 1) / 2 - 4 * st.first_saved);
  CHECK(per_rank(llama7, interleaved).total() > per_rank(llama7, plain).total());
  CHECK(per_rank(llama7, two_micro).total() < per_rank(llama7, plain).total());
}

TEST_CASE("expert parallelism shards Mixtral-8x7B's routed experts") {
  // 46,702,792,704 parameters, of which 32 layers x 8 experts x 3 x 4096 x 14336 = 45,097,156,608
  // in routed experts (mistralai/Mixtral-8x7B-v0.1 config.json).
  const auto f = rank_facts(models::mixtral(models::mixtral_8x7b(4096), {}), per_gpu, devices::h100_80gb);
  constexpr std::int64_t P = 46'702'792'704, experts = 45'097'156'608;
  CHECK(f.params.total == P);
  CHECK(f.experts.experts == 8);
  CHECK(f.experts.params == experts);
  // 4096 tokens x top 2 x 4096 wide, bf16, dispatched (and received) per MoE layer.
  CHECK(f.experts.dispatch_bytes == 4096LL * 2 * 4096 * 2);
  // ep = 8 over 8 data-parallel ranks: one expert per rank, attention, routers, norms and
  // embeddings replicated: 1,605,636,096 + 5,637,144,576 parameters, 2 bytes each.
  const auto r = per_rank(f, parallel_layout{.world_size = 8, .expert_parallel = 8});
  CHECK(r.params.total == P - experts + experts / 8);
  CHECK(r.parameters == 2 * 7'242'780'672LL);
  CHECK(r.expert_all_to_all == 2 * f.experts.dispatch_bytes);
  // ZeRO-1 over 16 ranks, ep 8: the experts' optimizer state is sharded over the 2 ranks of their
  // expert-data-parallel group, the rest over all 16.
  const auto z = per_rank(f, parallel_layout{.world_size = 16, .engine = sharding::zero, .zero_stage = 1, .expert_parallel = 8});
  CHECK(z.optimizer_state == 16 * (P - experts) / 16 + 16 * (experts / 8) / 2);
  CHECK(per_rank(f, zero(1, 16)).optimizer_state == 16 * P / 16);
  // Bad expert layouts are named errors.
  CHECK_THROWS_WITH(per_rank(f, parallel_layout{.world_size = 8, .expert_parallel = 3}), Catch::Contains("does not divide the data-parallel size"));
  CHECK_THROWS_WITH(per_rank(f, parallel_layout{.world_size = 12, .expert_parallel = 6}), Catch::Contains("does not divide the number of experts"));
  CHECK_THROWS_WITH(per_rank(llama7, parallel_layout{.world_size = 8, .expert_parallel = 2}), Catch::Contains("mixture-of-experts"));
}

TEST_CASE("Megatron's theoretical_memory_usage.py, activations of the first stage") {
  // Walked models against compute_activation_memory (SP + selective) and
  // compute_activation_memory_without_sp; bf16, micro-batch 1. The differences are the
  // PyTorch-level ops' saves, explained op by op in docs/distributed.md.
  constexpr training bf16{.batch = 1, .precision = pure_bf16, .optimizer = adam};
  auto ratio = [](const step_facts& f, const parallel_layout& l, const megatron_args& a) {
    return static_cast<double>(detail::stage_activations(f, l, 0)) / megatron_activation_bytes(a);
  };
  // GPT-3 175B (Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads, context 2048;
  // vocabulary padded to 51200 as Megatron does; Korthikanti et al. 2022, Table 3: TP 8, PP 8),
  // SP, selective recomputation (flash attention keeps no a·s² scores):
  // 34 s·b·h per layer as the formula (SDPA's output needs no copy on CUDA: op_rules.md CT2), plus
  // the log-sum-exp and one block's backward temporaries.
  const auto gpt3 = rank_facts(models::gpt(models::gpt_config{51200, 2048, 12288, 96, 96, 10, 2048, false, 0, attention_impl::flash}), bf16,
                               devices::h100_80gb);
  const megatron_args a3{.seq_length = 2048, .hidden_size = 12288, .ffn_hidden_size = 4 * 12288, .num_layers = 96, .num_attention_heads = 96,
                         .padded_vocab_size = 51200, .tensor_model_parallel_size = 8, .pipeline_model_parallel_size = 8, .data_parallel_size = 16,
                         .sequence_parallel = true, .selective_recompute = true, .use_distributed_optimizer = true};
  CHECK(megatron_activation_bytes(a3) == 10'292'838'400.0);
  CHECK(ratio(gpt3, megatron(1024, 8, 8, true, true), a3) == Approx(1.006).epsilon(0.005));
  // Llama-2-70B (meta-llama/Llama-2-70b-hf config.json: hidden 8192, intermediate 28672, 80
  // layers, 64 heads, 8 key/value heads, vocabulary 32000), TP 8, PP 4, SP: HF's RMSNorm keeps fp32 copies (6 s·b·h each, not 2; 10 in
  // PyTorch 1.13, whose mean(dim) kept the square: op_rules.md 2.6 #6) and SwiGLU four FFN-wide
  // tensors (8·f/h, not 4·f/h): 1.52 x the formula, which models a GeLU MLP.
  const auto l70 = rank_facts(models::llama(models::llama2_70b(4096)), bf16, devices::h100_80gb);
  const megatron_args a70{.seq_length = 4096, .hidden_size = 8192, .ffn_hidden_size = 28672, .num_layers = 80, .num_attention_heads = 64,
                          .num_query_groups = 8, .padded_vocab_size = 32000, .swiglu = true, .untie_embeddings_and_output_weights = true,
                          .rms_norm = true, .tensor_model_parallel_size = 8, .pipeline_model_parallel_size = 4, .data_parallel_size = 4,
                          .sequence_parallel = true, .selective_recompute = true, .use_distributed_optimizer = true};
  const auto L70 = megatron(128, 8, 4, true, true);
  CHECK(static_cast<double>(per_rank_at_stage(l70, L70, 0).model_states()) == megatron_weight_and_optimizer_bytes(a70));
  CHECK(ratio(l70, L70, a70) == Approx(1.520).epsilon(0.005));
  // Llama-2-7B (config.json: hidden 4096, intermediate 11008, 32 layers, 32 heads), TP 2, no SP:
  // the (10 + 24/t) split of both, the same per-layer ops as above.
  const auto l7 = rank_facts(models::llama(models::llama2_7b(4096)), bf16, devices::h100_80gb);
  const megatron_args a7{.seq_length = 4096, .hidden_size = 4096, .ffn_hidden_size = 11008, .num_layers = 32, .num_attention_heads = 32,
                         .padded_vocab_size = 32000, .swiglu = true, .untie_embeddings_and_output_weights = true, .rms_norm = true,
                         .tensor_model_parallel_size = 2, .data_parallel_size = 4};
  const auto L7 = megatron(8, 2, 1, false, false);
  CHECK(static_cast<double>(per_rank(l7, L7).model_states()) == megatron_weight_and_optimizer_bytes(a7));
  CHECK(ratio(l7, L7, a7) == Approx(1.331).epsilon(0.005));
}

TEST_CASE("DeepSpeed's T5-3B estimates from the zoo model's own counts") {
  // DeepSpeed's docs (docs/code-docs/source/memory.rst) run estimate_zero{2,3}_model_states_mem_needs_all_live
  // on transformers' T5-3B: "2851M total params, 32M largest layer params" (int(count / 1e6)),
  // fp16 + Adam, 1 node x 8 GPUs. The zoo model's records give the counts themselves.
  const training fp16_adam{.batch = 1, .precision = pure_fp16, .optimizer = adam};
  const auto t5 = rank_facts(models::t5(models::t5_3b(128)), fp16_adam, devices::a100_80gb);
  const std::int64_t P = t5.params.total, L = t5.params.largest_layer;
  CHECK(P == 2'851'598'336);
  CHECK(t5.params.trainable == P);
  // The largest parameter tensor is the shared embedding (encoder, decoder and the tied head),
  // larger than a T5-3B FFN weight (16384 x 1024): DeepSpeed's "32M" (model_to_params: the
  // largest module's own parameters) is that table.
  CHECK(L == 32128 * 1024);
  CHECK(L > 16384 * 1024);
  CHECK(P / 1'000'000 == 2851);
  CHECK(L / 1'000'000 == 32);
  auto states = [&](parallel_layout l) { return per_rank(t5, l).model_states(); };
  auto whole_gradients = zero(2, 8);
  whole_gradients.deepspeed.estimator_accounting = true;
  CHECK(states(whole_gradients) == deepspeed_zero2_gpu_bytes_before_5099(P, 8, false));
  CHECK(states(zero(2, 8)) == deepspeed_zero2_gpu_bytes(P, 8, false));
  CHECK(states(zero(2, 8, {true, false})) == deepspeed_zero2_gpu_bytes(P, 8, true));
  CHECK(states(zero(3, 8)) == deepspeed_zero3_gpu_bytes(P, L, 8, false, false));
  CHECK(states(zero(3, 8, {true, false})) == deepspeed_zero3_gpu_bytes(P, L, 8, true, false));
  CHECK(states(zero(3, 8, {true, true})) == deepspeed_zero3_gpu_bytes(P, L, 8, true, true));
  // The GiB the docs print for the live model (Python's f"{x:.2f}"): 15.93, 5.31; 6.10, 0.79, 0.12.
  auto centi_gib = [](std::int64_t bytes) { return (bytes * 100 + GiB / 2) / GiB; };
  CHECK(centi_gib(states(whole_gradients)) == 1593);
  CHECK(centi_gib(states(zero(2, 8, {true, false}))) == 531);
  CHECK(centi_gib(states(zero(3, 8))) == 610);
  CHECK(centi_gib(states(zero(3, 8, {true, false}))) == 79);
  CHECK(centi_gib(states(zero(3, 8, {true, true}))) == 12);
}

TEST_CASE("a tied output layer has a copy on the last pipeline stage") {
  // Megatron-LM (language_module.py, setup_embeddings_and_output_layer): with pp > 1 the last
  // stage holds the word embedding for its output layer, with gradients and optimizer state.
  auto tied_copy = [](const step_facts& f, std::int64_t vocab, std::int64_t width) {
    CHECK(f.stages.tied_params == vocab * width);
    const auto one = parallel_layout{.world_size = 2, .pipeline_parallel = 2};
    const auto two = parallel_layout{.world_size = 4, .tensor_parallel = 2, .pipeline_parallel = 2};
    // The last stage's blocks and final norm, plus the tied table (split over the tensor ranks).
    const auto last = per_rank_at_stage(f, one, 1), first = per_rank_at_stage(f, one, 0);
    CHECK(last.params.total + first.params.total == f.params.total + vocab * width);
    CHECK(last.params.trainable + first.params.trainable == f.params.trainable + vocab * width);
    if (f.split.tp_divides % 2 != 0) return;  // Gemma-2B: one key/value head, no tensor parallelism
    auto untied = f;
    untied.stages.tied_params = untied.stages.tied_trainable = 0;
    CHECK(per_rank_at_stage(f, two, 1).params.total - per_rank_at_stage(untied, two, 1).params.total == (vocab * width + 1) / 2);
    CHECK(per_rank_at_stage(f, two, 0).params.total == per_rank_at_stage(untied, two, 0).params.total);
    // No pipeline: one copy only.
    CHECK(per_rank(f, ddp(1)).params.total == f.params.total);
  };
  const training step{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
  tied_copy(rank_facts(models::gpt(models::gpt2_small(128)), step, devices::a100_40gb), 50257, 768);
  tied_copy(rank_facts(models::llama(models::qwen2_0_5b(128)), step, devices::a100_40gb), 151936, 896);
  tied_copy(rank_facts(models::llama(models::gemma_2b(128)), step, devices::a100_40gb), 256000, 2048);
  // T5: the encoder-decoder is split evenly over the stages; the head's copy of the shared table too.
  tied_copy(rank_facts(models::t5(models::t5_small(64)), step, devices::a100_40gb), 32128, 512);
  // An untied head (Llama-2) has its own weight on the last stage already: no copy.
  CHECK(llama7.stages.tied_params == 0);
  // Its states follow the engine: ZeRO-1's 2 + 2 bytes per element on the last stage, 16 sharded.
  const auto gpt2 = rank_facts(models::gpt(models::gpt2_small(128)), step, devices::a100_40gb);
  auto z1 = zero(1, 4);
  z1.pipeline_parallel = 2;
  const auto last = per_rank_at_stage(gpt2, z1, 1);
  CHECK(last.parameters == 2 * last.params.total);
  CHECK(last.gradients == 2 * last.params.trainable);
}

TEST_CASE("the planner varies tensor and pipeline parallelism: Llama-2-70B on 16 x A100-80GB") {
  // 1.1 TB of model states (16 bytes per parameter and 2-byte weights and gradients) on 1.28 TB
  // of GPUs: only a split over TP x PP with optimizer offload fits.
  const auto f = rank_facts(models::llama(models::llama2_70b(4096)), per_gpu, devices::a100_80gb);
  CHECK(f.split.tp_divides == 8);
  CHECK(f.split.layers == 80);
  CHECK(f.stages.block_output_bytes == 4096 * 8192 * 2);
  const auto ranked = rank_layouts(f, 16);
  REQUIRE(ranked[0].fits);
  // The cheapest: TP 8 (one node, sequence parallel) x 2 data-parallel ranks, ZeRO-1 with the
  // optimizer offloaded (ZeRO-2 + offload keeps the same states and costs the same: second).
  const auto& best = ranked[0].layout;
  CHECK(best.tensor_parallel == 8);
  CHECK(best.pipeline_parallel == 1);
  CHECK(best.sequence_parallel);
  CHECK(best.engine == sharding::zero);
  CHECK(best.offload.optimizer);
  // The stated cost, term by term: data-parallel traffic 2 Psi and 10 x the host traffic (gradients
  // down, parameters up) of this rank's shard, plus TP's 4 all-reduces per layer of s x h 16-bit
  // elements, a ring moving 2 (t - 1) / t of each.
  const auto psi = 2 * ranked[0].budget.params.total;
  const std::int64_t x = 4096 * 8192 * 2, tp_bytes = 80 * (8 * 7 * x / 8);
  CHECK(ranked[0].cost == 2 * psi + 10 * 2 * ((psi + 1) / 2) + tp_bytes);
  CHECK(ranked[0].cost == step_cost(f, per_rank(f, best)));
  // Every other layout that fits costs as much or more; the first with another split costs more.
  for (const auto& c : ranked)
    if (c.fits) CHECK(c.cost >= ranked[0].cost);
  const auto other_split = std::find_if(ranked.begin(), ranked.end(), [&](const ranked_layout& c) {
    return c.layout.tensor_parallel != best.tensor_parallel || c.layout.pipeline_parallel != best.pipeline_parallel;
  });
  REQUIRE(other_split != ranked.end());
  CHECK(other_split->fits);
  CHECK(other_split->cost > ranked[0].cost);
  // A pipeline pays its bubble (Narayanan et al. 2021): p - 1 micro-batches' forward and backward
  // (3 x the forward FLOPs, ~2 x parameters x tokens) of a rank's share, at 520 FLOPs per fabric byte.
  CHECK(f.forward_flops > 2 * 68'976'648'192 * 4096);
  auto pipelined = best;
  pipelined.pipeline_parallel = 2;
  CHECK(detail::pipeline_bubble_cost(f, pipelined) == (3 * f.forward_flops + 15) / 16 / 520);
  const auto r = per_rank(f, pipelined);
  CHECK(step_cost(f, r) == step_cost(r) + 2 * 40 * (8 * 7 * x / 8) + 2 * 2 * (x / 8) + detail::pipeline_bubble_cost(f, pipelined));
}
