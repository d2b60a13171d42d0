// LoRA adapters (issue D): PEFT's parameter counts pinned, the simulated model agreeing with
// them, and what autograd keeps through a frozen base linear and its adapter
// (layers/adapters.hpp; PyTorch 2.6 CPU measurement in benchmarks/accuracy/lora_probe.py).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

namespace {
constexpr models::lora_config qv8{8, q_proj | v_proj, 0, base_weights::same};
}  // namespace

// PEFT print_trainable_parameters() for Llama-2-7B, r = 8 on q_proj, v_proj:
// "trainable params: 4,194,304 || all params: 6,742,609,920" (the figure).
static_assert(models::lora_counts(models::llama2_7b(), qv8).trainable == 4'194'304);
static_assert(models::lora_counts(models::llama2_7b(), qv8).all == 6'742'609'920);
static_assert(models::llama_parameter_count(models::llama2_7b()) == 6'738'415'616);
// Phi-3-mini-4k-instruct: 3,821,079,552 parameters (Hugging Face model page, "3.8B"; config.json sizes)
static_assert(models::llama_parameter_count(models::phi3_mini()) == 3'821'079'552);
static_assert(parse_lora_targets("q_proj,v_proj") == (q_proj | v_proj));
static_assert(parse_lora_targets("all-linear") == all_linear);
static_assert(parse_lora_targets("o_proj,down_proj,gate_proj") == (o_proj | down_proj | gate_proj));

TEST_CASE("closed-form Llama parameter counts equal the simulated ones") {
  for (const auto& g : {models::llama2_7b(64), models::llama2_70b(64), models::llama3_8b(64), models::mistral_7b(64)})
    CHECK(models::llama_parameter_count(g) == budget_totals(models::llama(g), training{.batch = 1}, devices::a100_80gb).parameter_count);
  const auto phi = models::phi3_mini(64);
  CHECK(models::llama_parameter_count(phi) == budget_totals(models::phi3(phi), training{.batch = 1}, devices::a100_80gb).parameter_count);
  CHECK_THROWS_WITH(models::llama(phi), Catch::Contains("fused_projections"));
}

TEST_CASE("LoRA Llama-2-7B: trainable parameters and frozen base bytes") {
  const auto g = models::llama2_7b(256);
  const auto b = budget_totals(models::llama_lora(g, qv8), training{.batch = 1, .precision = pure_bf16}, devices::a100_80gb);
  CHECK(b.trainable_count == 4'194'304);
  // everything but the trainable adapters and the frozen norms is base weight, in bf16 here; all
  // of it is parameters, as PEFT counts them ("all params")
  const auto norms = (2 * g.layers + 1) * g.width;
  CHECK(b.parameter_count == models::llama_parameter_count(g) + 4'194'304);
  CHECK(b.parameter_count == models::lora_counts(g, qv8).all);
  CHECK(b.base_weight_count == models::llama_parameter_count(g) - norms);
  CHECK(b.base_weight_bytes == 2 * (models::llama_parameter_count(g) - norms));
  CHECK(b.parameters == b.base_weight_bytes + 2 * (4'194'304 + norms));  // pure bf16: adapters and norms in bf16 too
  CHECK(b.buffers == 0);
  // Adam: two fp32 moments per trainable parameter only; bf16 master copies of adapters only
  CHECK(b.optimizer_state == 8 * 4'194'304);
  const auto all = models::lora_counts(g, models::lora_config{16, parse_lora_targets("all-linear"), 5, base_weights::bf16});
  const auto b2 = budget_totals(models::llama_lora(g, models::lora_config{16, all_linear, 5, base_weights::bf16}),
                                training{.batch = 1, .precision = amp_bf16}, devices::a100_80gb);
  CHECK(b2.trainable_count == all.trainable);
  CHECK(all.trainable == 39'976'960);  // PEFT, r = 16 on all-linear: 32 · 16 · (4·8192 + 3·(4096 + 11008))
}

TEST_CASE("bad LoRA settings are errors") {
  const auto g = models::llama2_7b(64);
  CHECK_THROWS(parse_lora_targets("qkvproj"));
  CHECK_THROWS(parse_lora_targets("q_proj,"));
  CHECK_THROWS(models::llama_lora(g, models::lora_config{0, q_proj, 0, base_weights::same}));
  CHECK_THROWS(models::llama_lora(g, models::lora_config{4097, q_proj, 0, base_weights::same}));
  CHECK_THROWS(models::llama_lora(g, models::lora_config{8, 128, 0, base_weights::same}));  // qkv_proj: Phi-3's name
  CHECK_THROWS(models::llama_lora(g, models::lora_config{8, 1 << 13, 0, base_weights::same}));  // no such bit
}

namespace {
/// Saved bytes of the last record (the adapted linear) after a trainable linear, [16, 64] fp32.
std::int64_t saved_by_adapter(layer adapted, training plan = training{.batch = 2}) {
  const auto b = budget(sequential(input(16, 64), linear(64), adapted), plan, devices::a100_80gb);
  return b.per_record[3].saved_bytes;
}
}  // namespace

TEST_CASE("autograd through a frozen base linear and its adapter") {
  const std::int64_t x = 2 * 16 * 64 * 4, a = 2 * 16 * 4 * 4;
  // frozen base alone: its weight needs no gradient, so its input is not kept
  CHECK(saved_by_adapter(lora_linear(32, 0)) == 0);
  // adapter: lora_A keeps x, lora_B keeps A's output [16, r]; `* scaling` keeps nothing in
  // PyTorch 2.x (CUDA and 2.6 CPU), an 8-byte scalar operand in 1.13 (scalar_operand_saved,
  // op_rules.md 2.6 #5)
  CHECK(saved_by_adapter(lora_linear(32, 4)) == x + a);
  CHECK(saved_by_adapter(lora_linear(32, 4), training{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu}) == x + a);
  CHECK(saved_by_adapter(lora_linear(32, 4), training{.batch = 2, .runtime = runtime_kind::torch1_13_cpu, .backend = backend_kind::cpu}) == x + a + 8);
  // dropout on the adapter input: the bool mask (CUDA) and the dropped copy instead of x
  CHECK(saved_by_adapter(lora_linear(32, 4, 10)) == x / 4 + x + a);
  // a trainable linear of the same shape keeps x: the adapter adds only [16, r]
  CHECK(saved_by_adapter(linear(32, no_bias)) == x);
}

namespace {
/// Saved bytes of an adapted [16, 64] -> 32 layer (rank 4 or the frozen base alone) on the
/// PyTorch 2.6 CPU runtime, its fp32 input needing a gradient (a LayerNorm before it) or not.
std::int64_t saved_26(std::int64_t rank, std::int64_t dropout, bool amp, bool x_grad) {
  const training plan{.batch = 2, .precision = amp ? amp_bf16 : fp32, .runtime = runtime_kind::torch2_6_cpu,
                      .backend = backend_kind::cpu};
  if (!x_grad) return budget(sequential(input(16, 64), lora_linear(32, rank, dropout)), plan, devices::a100_80gb).per_record[2].saved_bytes;
  return budget(sequential(input(16, 64), layer_norm(), lora_linear(32, rank, dropout)), plan, devices::a100_80gb).per_record[3].saved_bytes;
}
}  // namespace

// benchmarks/accuracy/lora_probe.py under PyTorch 2.6 CPU (lora_probe_output-2.6.txt): bytes of
// the distinct non-parameter storages saved_tensors_hooks sees in the adapted layer's forward.
TEST_CASE("LoRA linear: saved bytes equal PyTorch 2.6 CPU's") {
  struct row { std::int64_t rank, dropout; bool amp, x_grad; std::int64_t measured; };
  constexpr row rows[] = {
      {0, 0, false, false, 0},     {0, 0, false, true, 0},     {4, 0, false, false, 8704},  {4, 0, false, true, 8704},
      {0, 10, false, false, 0},    {0, 10, false, true, 0},    {4, 10, false, false, 8704}, {4, 10, false, true, 16896},
      {0, 0, true, false, 0},      {0, 0, true, true, 4096},   {4, 0, true, false, 4608},   {4, 0, true, true, 9216},
      {0, 10, true, false, 0},     {0, 10, true, true, 4096},  {4, 10, true, false, 4608},  {4, 10, true, true, 17408},
  };
  for (const auto& r : rows) {
    INFO("rank " << r.rank << " dropout " << r.dropout << " amp " << r.amp << " x_grad " << r.x_grad);
    CHECK(saved_26(r.rank, r.dropout, r.amp, r.x_grad) == r.measured);
  }
}

// Quantized frozen weights (QLoRA): bitsandbytes' storage and the dequantized temporaries.
static_assert(quantized_weight_bytes(4096 * 4096, 4096, base_weights::nf4) == 4096 * 4096 / 2 + 4 * 4096 * 4096 / 64 + 64);
static_assert(quantized_weight_bytes(4096 * 4096, 4096, base_weights::nf4_dq) ==
              4096 * 4096 / 2 + 4096 * 4096 / 64 + 4 * (4096 * 4096 / 64 / 256) + 1024 + 4 + 64);
static_assert(quantized_weight_bytes(4096 * 4096, 4096, base_weights::int8) == 4096 * 4096 + 4 * 4096);
static_assert(quantized_weight_bytes(4096 * 4096, 4096, base_weights::bf16) == 0);

TEST_CASE("QLoRA Llama-2-7B: 4-bit base, 16-bit embeddings and head") {
  const auto g = models::llama2_7b(512);
  const models::lora_config q{8, q_proj | v_proj, 5, base_weights::nf4_dq};
  const auto b = budget_totals(models::llama_lora(g, q), training{.batch = 1, .precision = amp_bf16}, devices::a100_80gb);
  CHECK(b.trainable_count == 4'194'304);
  const std::int64_t D = 4096, F = 11008, V = 32000;
  const auto per_layer = 4 * quantized_weight_bytes(D * D, D, base_weights::nf4_dq) + 2 * quantized_weight_bytes(D * F, F, base_weights::nf4_dq) +
                         quantized_weight_bytes(F * D, D, base_weights::nf4_dq);
  CHECK(b.base_weight_bytes == 32 * per_layer + 2 * (2 * V * D));  // bf16 embedding and lm_head
  CHECK(b.parameter_count == models::lora_counts(g, q).all);  // PEFT counts 4-bit weights unpacked
  // about 0.5 + 0.127/8 bytes per quantized weight: 3.3 GB for the 6.5e9 weights of the layers
  CHECK(32 * per_layer > 3'200'000'000);
  CHECK(32 * per_layer < 3'400'000'000);
}

TEST_CASE("a quantized matmul's dequantized weight is a forward and backward temporary") {
  const training plan{.batch = 1, .precision = amp_bf16};
  const std::int64_t w16 = 64 * 4096 * 2;  // the [64, 4096] weight dequantized to bf16
  auto peaks = [&](base_weights base) {
    // one token through a frozen linear after a trainable LayerNorm (its input needs a gradient):
    // the weight-sized temporaries dominate
    const auto b = budget_totals(sequential(input(1, 4096), layer_norm(), lora_linear(64, 0, 0, base)), plan, devices::a100_80gb);
    return std::pair{b.forward_peak, b.fwd_bwd_peak};
  };
  const auto [f16, b16] = peaks(base_weights::bf16);
  const auto [f4, b4] = peaks(base_weights::nf4);
  const auto [f8, b8] = peaks(base_weights::int8);
  INFO("f16 " << f16 << " b16 " << b16 << " f4 " << f4 << " b4 " << b4 << " f8 " << f8 << " b8 " << b8);
  // NF4 forward: the dequantized weight on top of the bf16 base's forward peak
  CHECK(f4 - f16 == w16);
  CHECK(b4 == f4);  // its backward dequantizes again, below the forward's peak here
  // int8 forward: A quantized to int8 [1, 4096] and the int32 product [1, 64], no dequantized weight
  CHECK(f8 - f16 == 4096 + 64 * 4);
  // int8 backward: grad_A needs CB·SCB dequantized, which sets the step's peak (65.7 KB without it)
  CHECK(b8 >= w16);
  CHECK(b8 < w16 + 16 * 1024);
}

// benchmarks/accuracy/lora_llama_probe.py under PyTorch 2.6 CPU (lora_llama_probe_output-2.6.txt):
// the 2-layer Llama of the reference case llama2l_b2_t64 with every base weight frozen and r = 8
// adapters, batch 2 x 64 tokens: trainable parameters exactly, saved bytes within the reference
// tolerance (±2 %).
TEST_CASE("LoRA'd 2-layer Llama: saved bytes against PyTorch 2.6 CPU") {
  const models::llama_config g{32000, 256, 2, 8, 2, 688, 2048, 64, false, 0};
  struct row { std::int64_t targets, dropout; bool amp; std::int64_t trainable, saved; };
  constexpr row rows[] = {
      {q_proj | v_proj, 0, false, 13312, 4130816}, {q_proj | v_proj, 0, true, 13312, 22040576},
      {q_proj | v_proj, 10, false, 13312, 4655104}, {q_proj | v_proj, 10, true, 13312, 22302720},
      {all_linear, 0, false, 71936, 5531648},       {all_linear, 0, true, 71936, 23181824},
      {all_linear, 10, false, 71936, 8202240},      {all_linear, 10, true, 71936, 24582656},
  };
  for (const auto& r : rows) {
    const training plan{.batch = 2, .precision = r.amp ? amp_bf16 : fp32, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
    const auto b = budget_totals(models::llama_lora(g, models::lora_config{8, r.targets, r.dropout, base_weights::same}), plan, devices::a100_80gb);
    INFO("targets " << r.targets << " dropout " << r.dropout << " amp " << r.amp << " saved " << b.saved_activations << " measured " << r.saved);
    CHECK(b.trainable_count == r.trainable);
    CHECK(std::abs(b.saved_activations - r.saved) * 100 <= 2 * r.saved);
  }
}

// PEFT's lora.Embedding on embed_tokens beside q_proj, v_proj (measure26_llm.py
// llama2l_lora_qv_embed_* cases, reference/pytorch-2.6-cpu-llm.json): r·(vocab + width) more
// trainable, saved 4,398,592 bytes measured in fp32 (the ids, after_A [2, 64, 8] and the cast-free
// adapters' inputs).
TEST_CASE("LoRA on embed_tokens: PEFT's lora.Embedding on the Llama family's token table") {
  const models::llama_config g{32000, 256, 2, 8, 2, 688, 2048, 64, false, 0};
  const training plan{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const models::lora_config qv{.rank = 8, .targets = q_proj | v_proj}, qv_embed{.rank = 8, .targets = q_proj | v_proj | embed_tokens};
  const auto with = budget_totals(models::llama_lora(g, qv_embed), plan, devices::a100_80gb);
  CHECK(with.trainable_count == 271360);
  CHECK(with.trainable_count - budget_totals(models::llama_lora(g, qv), plan, devices::a100_80gb).trainable_count == 8 * (32000 + 256));
  CHECK(std::abs(with.saved_activations - 4398592) * 100 <= 2 * 4398592);
  // the same counts as PEFT's arithmetic on a tied-head model and on a 4-bit base, whose
  // embedding bitsandbytes leaves in 16 bit
  const auto qwen = models::qwen2_0_5b(64);
  const models::lora_config q4{.rank = 8, .targets = embed_tokens | q_proj, .base = base_weights::nf4_dq};
  const auto b4 = budget_totals(models::llama_lora(qwen, q4), training{.batch = 1, .precision = amp_bf16}, devices::a100_80gb);
  CHECK(b4.trainable_count == models::lora_counts(qwen, q4).trainable);
  CHECK(b4.parameter_count == models::lora_counts(qwen, q4).all);
  CHECK_THROWS_WITH(models::llama_lora(g, {.rank = 8, .targets = embed_tokens, .modules_to_save = models::save_embed_tokens}),
                    Catch::Contains("both a LoRA target and in modules_to_save"));
  // DoRA on embed_tokens (lora_embedding.hpp dora_embedding): a magnitude per embedding dimension,
  // the simulated model and PEFT's arithmetic agree; the frozen table's output [2, 64, 256] and
  // the update before its scaling are kept for the magnitude's gradient
  const models::lora_config dora_embed{.rank = 8, .targets = q_proj | v_proj | embed_tokens, .dora = true};
  const auto dora = budget_totals(models::llama_lora(g, dora_embed), plan, devices::a100_80gb);
  CHECK(dora.trainable_count == models::lora_counts(g, dora_embed).trainable);
  CHECK(dora.parameter_count == models::lora_counts(g, dora_embed).all);
  auto dora_qv = qv;
  dora_qv.dora = true;
  CHECK(dora.trainable_count - models::lora_counts(g, dora_qv).trainable == 8 * (32000 + 256) + 256);
  CHECK(dora.saved_activations - budget_totals(models::llama_lora(g, dora_qv), plan, devices::a100_80gb).saved_activations ==
        with.saved_activations - budget_totals(models::llama_lora(g, qv), plan, devices::a100_80gb).saved_activations + 2 * (2 * 64 * 256 * 4) + 2 * 256 * 4);
  CHECK(parse_lora_targets("q_proj,embed_tokens") == (q_proj | embed_tokens));
}

// The bf16 frozen base (measure26_llm.py *_base_bf16 cases, reference/pytorch-2.6-cpu-llm.json):
// bf16 norms keep the residual stream in bf16, so the q and v adapters share one bf16 input.
// Measured saved bytes: q,v 2,936,832; all-linear 3,815,936 (±2 %). That probe's LoraLinear is
// PEFT 0.x's forward written out, without PEFT >= 0.15's cast of the input to the adapters'
// type (cast_input = false); with it each adapter keeps a bf16 copy of its own.
TEST_CASE("LoRA'd 2-layer Llama with a bf16 base: saved bytes against PyTorch 2.6 CPU") {
  const models::llama_config g{32000, 256, 2, 8, 2, 688, 2048, 64, false, 0};
  const training plan{.batch = 2, .precision = amp_bf16, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  for (const auto& [targets, measured] : {std::pair<std::int64_t, std::int64_t>{q_proj | v_proj, 2'936'832}, {all_linear, 3'815'936}}) {
    const auto b = budget_totals(models::llama_lora(g, models::lora_config{8, targets, 0, base_weights::bf16, false, false}), plan, devices::a100_80gb);
    INFO("targets " << targets << " saved " << b.saved_activations);
    CHECK(std::abs(b.saved_activations - measured) * 100 <= 2 * measured);
    // PEFT >= 0.15: each adapter keeps a bf16 copy of its own input, so adapters that share an
    // input keep one more [tokens, 256] copy each: q,v one per layer; all-linear three (q, k, v
    // on one input, gate and up on another; o and down have theirs alone)
    const auto peft = budget_totals(models::llama_lora(g, models::lora_config{8, targets, 0, base_weights::bf16}), plan, devices::a100_80gb);
    const std::int64_t more_copies = targets == all_linear ? 3 : 1;
    CHECK(peft.saved_activations - b.saved_activations == g.layers * more_copies * 2 * 64 * 256 * 2);
  }
}

// PEFT's DoRA (use_dora=True) on TinyLlama-1.1B, r = 16 on q_proj and v_proj: PEFT's counts
// (cuda-h200/real-libraries-h200.json hf_tinyllama_b4_t1024_dora_bf16base: 1,102,351,872
// parameters, 2,303,488 trainable: LoRA's r·(in + out) and one magnitude per output row) and
// what the two multiplies by the magnitude keep: the base layer's and B's outputs, bf16
// [tokens, out] each, per adapted projection.
TEST_CASE("DoRA: magnitude vectors and the outputs the magnitude's gradient keeps") {
  const models::llama_config g{32000, 2048, 22, 32, 4, 5632, 2048, 1024, false, 0};
  const models::lora_config lora{16, q_proj | v_proj, 0, base_weights::bf16};
  auto dora = lora;
  dora.dora = true;
  CHECK(models::lora_counts(g, dora).trainable == 2'303'488);
  CHECK(models::lora_counts(g, dora).all == 1'102'351'872);
  const training plan{.batch = 4, .precision = amp_bf16};
  const auto with = budget_totals(models::llama_lora(g, dora), plan, devices::h200);
  const auto without = budget_totals(models::llama_lora(g, lora), plan, devices::h200);
  CHECK(with.trainable_count == 2'303'488);
  const std::int64_t tokens = 4 * 1024, q_out = 2048, v_out = 4 * 64;
  // base_result and lora_result (bf16) and the two [out] fp32 norms, per projection and layer
  CHECK(with.saved_activations - without.saved_activations == g.layers * (tokens * (q_out + v_out) * 2 * 2 + (q_out + v_out) * 4 * 2));
}

// bitsandbytes AdamW8bit (training.hpp adam8bit_state_bytes): two uint8 states per element and an
// fp32 absmax per 2048 elements for each, per tensor; tensors under 4096 elements keep two fp32
// states; the two 256-entry fp32 quantization maps once.
TEST_CASE("8-bit AdamW state: Llama-2-7B LoRA and full fine-tune") {
  constexpr auto g = models::llama2_7b(256);
  // LoRA r = 8 on q, v: 128 adapters of 32768 elements (16 blocks each)
  constexpr auto lora = budget_totals(models::llama_lora(g, {8, q_proj | v_proj, 0, base_weights::bf16}),
                                      training{.batch = 1, .precision = amp_bf16, .optimizer = adamw8bit}, devices::a100_80gb);
  static_assert(lora.trainable_count == 4'194'304);
  static_assert(lora.optimizer_state == 2 * 4'194'304 + 8 * 128 * 16 + 2048);  // 8,407,040
  static_assert(lora.optimizer_temporaries == 0);
  // the full model: 2N + 8 · 3,290,242 blocks (every tensor a multiple of 2048 but the 65 norms'
  // 4096 = 2 blocks each) + 2048
  const auto full = budget_totals(models::llama(g), training{.batch = 1, .precision = amp_bf16, .optimizer = adamw8bit}, devices::h200);
  CHECK(full.trainable_count == 6'738'415'616);
  CHECK(full.optimizer_state == 13'503'155'216);
  CHECK(full.optimizer_state < budget_totals(models::llama(g), training{.batch = 1, .precision = amp_bf16}, devices::h200).optimizer_state / 3);
  // a tensor under min_8bit_size keeps fp32 state: Linear(64, 32) + bias = 2048 + 32 elements
  const auto small = budget_totals(sequential(input(64), linear(32)), training{.batch = 1, .optimizer = adam8bit}, devices::t4);
  CHECK(small.optimizer_state == 8 * (2048 + 32) + 2048);
  // Linear(4096, 1) + bias: the weight goes 8-bit (2 blocks), the bias fp32
  const auto edge = budget_totals(sequential(input(4096), linear(1)), training{.batch = 1, .optimizer = adamw8bit}, devices::t4);
  CHECK(edge.optimizer_state == 2 * 4096 + 8 * 2 + 8 * 1 + 2048);
}

// The caching allocator model replays a LoRA job with its frozen base weights (op_rules.md A11):
// Llama-2-7B's 13.5 GB bf16 base cannot fit a 12 GB device whatever the adapters need, and the
// replay's allocated peak holds the base.
TEST_CASE("LoRA under the caching allocator model: the base weights are allocated") {
  const auto g = models::llama2_7b(256);
  const training plan{.batch = 1, .precision = amp_bf16, .model_allocator = true};
  const auto roomy = budget_totals(models::llama_lora(g, models::lora_config{8, q_proj | v_proj, 0, base_weights::bf16}), plan, devices::h100_80gb);
  REQUIRE(roomy.allocator_modelled);
  CHECK(roomy.allocated_total_peak > roomy.base_weight_bytes);
  CHECK(roomy.reserved_peak >= roomy.allocated_total_peak);
  device small = devices::h100_80gb;
  small.capacity = std::int64_t{12} * GiB;
  const auto b = budget_totals(models::llama_lora(g, models::lora_config{8, q_proj | v_proj, 0, base_weights::bf16}), plan, small);
  CHECK(b.base_weight_bytes > small.capacity);
  CHECK_FALSE(fits(b));
}

// Gradient accumulation walks the weights twice; the replay allocates them once (A11): four
// micro-batches reserve about what one does, not the parameters and optimizer state again.
TEST_CASE("caching allocator model: parameters allocated once under gradient accumulation") {
  const auto g = models::llama2_7b(256);
  const training one{.batch = 1, .precision = amp_bf16, .model_allocator = true};
  training four = one;
  four.batch = 4, four.micro_batch = 1;
  const auto a = budget_totals(models::llama(g), one, devices::h200);
  const auto b = budget_totals(models::llama(g), four, devices::h200);
  REQUIRE(a.allocator_modelled);
  CHECK(b.reserved_peak < a.reserved_peak + a.reserved_peak / 20);
  CHECK(b.reserved_peak > b.resident());
}

// PEFT's modules_to_save (peft/utils/other.py ModulesToSaveWrapper: the frozen original plus a
// deepcopy that trains, in the original's type) and TaskType.SEQ_CLS's score head. Qwen2-0.5B
// (tied embeddings, V x D = 151,936 x 896 = 136,134,656) with a bf16 base under AMP bf16: the
// lm_head copy adds V·D parameters, all trainable, in bf16 (2 B each), a bf16 .grad (2 B) and
// AdamW's two bf16 states (4 B); the tied original adds none.
TEST_CASE("LoRA modules_to_save: a trainable copy in the base's type") {
  const auto g = models::qwen2_0_5b(256);
  const training t{.batch = 2, .precision = amp_bf16};
  const std::int64_t table = 151'936LL * 896;
  models::lora_config l{8, q_proj | v_proj, 0, base_weights::bf16};
  const auto plain = budget_totals(models::llama_lora(g, l), t, devices::a100_80gb);
  CHECK(plain.parameter_count == 494'032'768 + 540'672);
  l.modules_to_save = models::save_lm_head;
  const auto saved = budget_totals(models::llama_lora(g, l), t, devices::a100_80gb);
  CHECK(saved.parameter_count == plain.parameter_count + table);
  CHECK(saved.trainable_count == plain.trainable_count + table);
  CHECK(models::lora_counts(g, l).all == saved.parameter_count);
  CHECK(models::lora_counts(g, l).trainable == saved.trainable_count);
  CHECK(saved.parameters == plain.parameters + 2 * table);
  CHECK(saved.gradients == plain.gradients + 2 * table);
  CHECK(saved.optimizer_state == plain.optimizer_state + 4 * table);
  CHECK(saved.master_weights == 0);
  // embed_tokens too, with the base in the precision's type (fp32 under AMP): plain fp32 parameters
  l.modules_to_save = models::save_lm_head | models::save_embed_tokens;
  l.base = base_weights::same;
  const auto both = budget_totals(models::llama_lora(g, l), t, devices::a100_80gb);
  CHECK(both.parameter_count == plain.parameter_count + 2 * table);
  CHECK(both.parameters == 4 * both.parameter_count);
  CHECK(both.optimizer_state == 8 * both.trainable_count);
  CHECK(models::lora_counts(g, l).all == both.parameter_count);
  // an untied head: the original keeps its own table (frozen), the copy adds another
  auto untied = g;
  untied.tied_head = false;
  l = models::lora_config{8, q_proj | v_proj, 0, base_weights::bf16};
  l.modules_to_save = models::save_lm_head;
  CHECK(budget_totals(models::llama_lora(untied, l), t, devices::a100_80gb).parameter_count == plain.parameter_count + 2 * table);
}

TEST_CASE("LoRA on a classifier: score trains (PEFT's SEQ_CLS), its last token's logits") {
  const auto g = models::qwen2_0_5b(256);
  const training t{.batch = 2, .precision = amp_bf16};
  models::lora_config l{8, q_proj | v_proj, 0, base_weights::bf16};
  l.labels = 3;
  const auto b = budget_totals(models::llama_lora_seq_cls(g, l), t, devices::a100_80gb);
  // Qwen2ForSequenceClassification with 3 labels: 494,032,768 + 896 x 3; PEFT's copy of score adds 896 x 3
  CHECK(b.parameter_count == 494'032'768 + 2 * 896 * 3 + 540'672);
  CHECK(b.trainable_count == 540'672 + 896 * 3);
  CHECK(models::lora_counts(g, l).all == b.parameter_count);
  // no vocabulary logits: far below the causal LM's peak
  l.labels = 0;
  CHECK(b.step_peak < budget_totals(models::llama_lora(g, l), t, devices::a100_80gb).step_peak / 2);
  l.labels = 3;
  l.modules_to_save = models::save_lm_head;
  CHECK_THROWS_WITH(models::llama_lora_seq_cls(g, l), Catch::Contains("modules_to_save"));
}

TEST_CASE("prepare_model_for_kbit_training: fp32 embedding, norms and head, an fp32 residual stream") {
  // a 2-layer Llama, NF4 base, r = 8 on q and v, AMP bf16, every decoder layer checkpointed (its
  // use_gradient_checkpointing=True)
  const models::llama_config g{32000, 256, 2, 8, 2, 688, 2048, 64, false, 0};
  models::lora_config q{8, q_proj | v_proj, 0, base_weights::nf4};
  const training plan{.batch = 2, .precision = amp_bf16, .checkpoint_blocks = true};
  const auto plain = budget_totals(models::llama_lora(g, q), plan, devices::a100_80gb);
  q.kbit_prepared = true;
  const auto prepared = budget_totals(models::llama_lora(g, q), plan, devices::a100_80gb);
  // the big modules bitsandbytes leaves unquantized go from bf16 to fp32: embedding and lm_head
  // (the frozen norms are parameters of the plan's type, fp32 under AMP, either way)
  CHECK(prepared.base_weight_bytes - plain.base_weight_bytes == 2 * (2 * 32000 * 256));
  CHECK(prepared.trainable_count == plain.trainable_count);
  // the checkpoints keep each layer's input: [2, 64, 256] in fp32 instead of bf16
  const std::int64_t block_input16 = 2 * 64 * 256 * 2;
  CHECK(prepared.saved_activations - plain.saved_activations >= 2 * block_input16);
}

TEST_CASE("bitsandbytes' Linear4bit returns its input's type") {
  // an fp32 input (a LayerNorm's output under CUDA autocast) through a frozen NF4 linear: x is cast
  // to bf16 for the product and the product back to fp32 (`.to(inp_dtype)`); a bf16 base's
  // autocast linear returns bf16
  const training plan{.batch = 1, .precision = amp_bf16};
  auto output_bytes = [&](base_weights base) {
    const auto b = budget(sequential(input(8, 4096), layer_norm(), lora_linear(1024, 0, 0, base)), plan, devices::a100_80gb);
    return b.per_record[3].output_bytes;  // input, layer_norm, lora_linear under the root
  };
  CHECK(output_bytes(base_weights::bf16) == 8 * 1024 * 2);
  CHECK(output_bytes(base_weights::nf4) == 8 * 1024 * 4);
}

// --- LoRA on GPT-2 (attention_adapters on the attention op, models::gpt_lora) -------------------

TEST_CASE("gpt_lora counts what PEFT's print_trainable_parameters prints for gpt2") {
  const auto g = models::gpt2_small(128);
  // r = 8 on c_attn (PEFT's default target for GPT-2): 12 blocks x 8 x (768 + 2304)
  const models::lora_config c_attn_only{.rank = 8, .targets = c_attn};
  const auto counts = models::gpt_lora_counts(g, c_attn_only);
  CHECK(counts.trainable == 294912);
  CHECK(counts.all == 124734720);
  const auto b = budget(models::gpt_lora(g, c_attn_only), training{.batch = 2}, devices::a100_80gb);
  CHECK(b.parameter_count == counts.all);
  CHECK(b.trainable_count == counts.trainable);
  // every Conv1D (all-linear), DoRA's magnitudes too: the simulated model and the closed form agree
  const models::lora_config every{.rank = 16, .targets = all_linear, .dora = true};
  const auto all = budget(models::gpt_lora(g, every), training{.batch = 2}, devices::a100_80gb);
  CHECK(all.trainable_count == models::gpt_lora_counts(g, every).trainable);
  CHECK(all.trainable_count == 12 * (16 * (4 + 2 + 5 + 5) * 768 + (3 + 1 + 4 + 1) * 768));
  CHECK(all.parameter_count == models::gpt_lora_counts(g, every).all);
}

TEST_CASE("LoRA on GPT-2 keeps the frozen base's weights and drops their gradients and the activations only they need") {
  const auto g = models::gpt2_small(512);
  const training plan{.batch = 4};
  const auto full = budget(models::gpt(g), plan, devices::a100_80gb);
  const auto lora = budget(models::gpt_lora(g, {.rank = 8, .targets = c_attn}), plan, devices::a100_80gb);
  // the frozen base is still there, in fp32 ...
  CHECK(lora.parameters >= full.parameters);
  // ... but only the adapters have .grad and AdamW state
  CHECK(lora.gradients == 294912 * 4);
  CHECK(lora.optimizer_state == 2 * 294912 * 4);
  // no frozen matmul keeps its input for a weight gradient: fewer saved bytes
  CHECK(lora.saved_activations < full.saved_activations);
  // the adapter keeps A's output [tokens, r] per block: a few hundred KiB, not the 768-wide inputs
  const auto c_proj_too = budget(models::gpt_lora(g, {.rank = 8, .targets = c_attn | c_proj}), plan, devices::a100_80gb);
  CHECK(c_proj_too.saved_activations > lora.saved_activations);
  CHECK(c_proj_too.saved_activations - lora.saved_activations < full.saved_activations - lora.saved_activations);
}

TEST_CASE("attention_adapters on separate q, k, v projections: PEFT's query and value adapters over a frozen attention") {
  constexpr std::int64_t D = 256, r = 4;
  const auto net = [](auto... adapters) {
    return sequential(input(64, D), attention(D, heads(4), attention_impl::separate_qkv, adapters...));
  };
  const auto plain = budget(net(), training{.batch = 2}, devices::a100_80gb);
  const auto adapted = budget(net(attention_adapters{.rank = r, .parts = adapt_q | adapt_v}), training{.batch = 2}, devices::a100_80gb);
  CHECK(adapted.parameter_count == plain.parameter_count + 2 * r * (D + D));
  CHECK(adapted.trainable_count == 2 * r * (D + D));
  CHECK(adapted.per_record[2].parameter_count == adapted.parameter_count);  // records: the sequence, input, attention
  CHECK(std::string(adapted.records[2].op->name(adapted.records[2])) == "attention (lora)");
}

TEST_CASE("bert_lora_seq_cls counts what PEFT counts: adapters, the classifier twice (modules_to_save)") {
  const auto b = models::bert_base(128);
  const models::lora_config query_value{.rank = 8, .targets = bert_query | bert_value, .labels = 2};
  const auto counts = models::bert_lora_counts(b, query_value);
  // 12 layers x 2 adapters x 8 x (768 + 768), and the classifier's copy (768 x 2 + 2) trains
  CHECK(counts.trainable == 12 * 2 * 8 * (768 + 768) + 1538);
  // bert-base-uncased with its pooler (109,482,240), the adapters, the classifier's original and copy
  CHECK(counts.all == 109482240 + 294912 + 2 * 1538);
  const auto r = budget(models::bert_lora_seq_cls(b, query_value, 10), training{.batch = 2}, devices::a100_80gb);
  CHECK(r.parameter_count == counts.all);
  CHECK(r.trainable_count == counts.trainable);
  // "dense" adapts attention.output.dense, intermediate.dense, output.dense and pooler.dense
  const models::lora_config every{.rank = 4, .targets = all_linear, .dora = true, .labels = 3};
  const auto all = budget(models::bert_lora_seq_cls(b, every, 10), training{.batch = 2}, devices::a100_80gb);
  CHECK(all.trainable_count == models::bert_lora_counts(b, every).trainable);
  CHECK(all.parameter_count == models::bert_lora_counts(b, every).all);
  // only the adapters and the classifier's copy have gradients: a full fine-tune's 109 M do not
  const auto full = budget(models::bert_seq_cls(b, 2, 10), training{.batch = 2}, devices::a100_80gb);
  CHECK(r.gradients == counts.trainable * 4);
  CHECK(r.saved_activations < full.saved_activations);
}

TEST_CASE("t5_lora injects adapters as PEFT does: every attention of both stacks, wi and wo, the rest frozen") {
  const auto t = models::t5_small(128);
  // PEFT's default for T5 (q, v): 18 attentions (6 encoder self, 6 decoder self, 6 cross) x 2 x 8 x (512 + 512)
  const models::lora_config q_v{.rank = 8, .targets = t5_q | t5_v};
  const auto counts = models::t5_lora_counts(t, q_v);
  CHECK(counts.trainable == 294912);
  CHECK(counts.all == 60506624 + 294912);
  const auto b = budget(models::t5_lora(t, q_v), training{.batch = 2}, devices::a100_80gb);
  CHECK(b.trainable_count == counts.trainable);
  CHECK(b.parameter_count == counts.all);
  CHECK(b.gradients == counts.trainable * 4);  // the norms, bucket tables and shared table are frozen
  const models::lora_config every{.rank = 8, .targets = all_linear, .dora = true};
  const auto all = budget(models::t5_lora(t, every), training{.batch = 2}, devices::a100_80gb);
  CHECK(all.trainable_count == models::t5_lora_counts(t, every).trainable);
  CHECK(all.parameter_count == models::t5_lora_counts(t, every).all);
  const auto full = budget(models::t5(t), training{.batch = 2}, devices::a100_80gb);
  CHECK(b.saved_activations < full.saved_activations);
}

// PEFT's layers_to_transform (lora_config::layers_to_transform): adapters on the listed decoder
// layers only. Measured (benchmarks/accuracy/lora_layers_probe.py, PyTorch 2.6 CPU, fp32, a
// 4-layer llama2l-sized decoder, r = 8 on q_proj and v_proj, batch 2, seq 64; saved bytes by
// saved_tensors_hooks): a layer before the first adapted one keeps nothing for backward (its
// input needs no gradient), a layer after it keeps what a frozen layer must keep to pass the
// gradient back.
TEST_CASE("layers_to_transform: adapters, counts and saved bytes on the listed layers only") {
  models::llama_config g{32000, 256, 4, 8, 2, 688, 2048, 64, false, 0};
  // the probe's decoder is written out: [B, T, d] RoPE tables, no DynamicCache (op_rules.md L27, L28)
  g = models::hand_written_decoder(g);
  const training plan{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  struct measured {
    models::layer_set layers;
    std::int64_t trainable, saved;
  };
  for (const auto& m : {measured{{}, 26624, 8359936}, measured{{0, 1}, 13312, 8081408}, measured{{2, 3}, 13312, 4130816},
                        measured{{3}, 6656, 2016256}, measured{{0, 3}, 13312, 8081408}, measured{{1, 2}, 13312, 6106112}}) {
    const models::lora_config l{.rank = 8, .targets = q_proj | v_proj, .layers_to_transform = m.layers};
    const auto b = budget_totals(models::llama_lora(g, l), plan, devices::a100_80gb);
    INFO("layers " << m.layers.bits[0]);
    CHECK(b.trainable_count == m.trainable);
    CHECK(models::lora_counts(g, l).trainable == m.trainable);
    CHECK(b.parameter_count == models::lora_counts(g, l).all);
    CHECK(b.saved_activations == m.saved);
  }
  // a list of every layer is the default (PEFT's None), record for record
  const auto all = models::llama_lora(g, {.rank = 8, .layers_to_transform = models::layer_set::range(0, 4)});
  const auto none = models::llama_lora(g, {.rank = 8});
  CHECK(budget_totals(all, plan, devices::a100_80gb).total() == budget_totals(none, plan, devices::a100_80gb).total());
  // runs of plain and adapted layers are one repeat each, numbered from their first layer
  const auto split = models::llama_lora(g, {.rank = 8, .layers_to_transform = {1, 2}});
  int repeats = 0;
  for (std::int32_t i = 0; i < split.records[0].span; ++i)
    if (split.records[static_cast<std::size_t>(i)].kind == node_kind::repeat) ++repeats;
  CHECK(repeats == 3);
  // the refusals: past the last layer, embed_tokens (PEFT finds no layer index in its path), another layer list
  CHECK_THROWS_WITH(models::llama_lora(g, {.rank = 8, .layers_to_transform = {4}}), Catch::Contains("names a layer past the model's last"));
  CHECK_THROWS_WITH(models::llama_lora(g, {.rank = 8, .targets = q_proj | embed_tokens, .layers_to_transform = {0}}),
                    Catch::Contains("would not adapt embed_tokens"));
  CHECK_THROWS_WITH(models::llama_lora(g, {.rank = 8, .layers_to_transform = {0}, .layers_pattern = "h"}), Catch::Contains("not this model's layer list"));
  CHECK_THROWS_WITH(models::llama_lora(g, {.rank = 8, .layers_pattern = "layers"}), Catch::Contains("without layers_to_transform"));
  CHECK_NOTHROW(models::llama_lora(g, {.rank = 8, .layers_to_transform = {0}, .layers_pattern = "layers"}));
  CHECK_THROWS_WITH(models::layer_set::range(3, 3), Catch::Contains("an empty list of layers"));
  CHECK_THROWS_WITH(models::layer_set({128}), Catch::Contains("past 127"));
  CHECK_THROWS_WITH(models::gpt_lora(models::gpt2_small(64), {.rank = 8, .targets = c_attn, .layers_to_transform = {0}}),
                    Catch::Contains("modelled on the Llama family"));
}

// Phi-3 and Mixtral take layers_to_transform too: PEFT's counts r·(in + out) per adapted layer
// (Phi-3-mini's qkv_proj 3072 -> 9216; Mixtral's q_proj 4096 -> 4096 and v_proj 4096 -> 1024).
TEST_CASE("layers_to_transform on Phi-3 and Mixtral") {
  const training plan{.batch = 1, .precision = amp_bf16};
  const auto phi = budget_totals(models::phi3_lora(models::phi3_mini(64), {.rank = 8, .targets = qkv_proj, .layers_to_transform = {30, 31}}), plan,
                                 devices::h100_80gb);
  CHECK(phi.trainable_count == 2 * 8 * (3072 + 9216));
  const auto mix = models::mixtral_lora(models::mixtral_8x7b(64), models::moe_config{}, {.rank = 8, .layers_to_transform = {0}});
  CHECK(budget_totals(mix, training{.batch = 1, .precision = pure_bf16}, devices::h200).trainable_count == 8 * (4096 + 4096) + 8 * (4096 + 1024));
}

// PEFT's LoraConfig.bias (lora_config::bias) on a Qwen2-style decoder, whose q, k, v projections
// have biases: "all" trains every bias, "lora_only" those of the adapted projections. Measured
// (benchmarks/accuracy/lora_bias_probe.py, PyTorch 2.6 CPU, a 4-layer llama2l-sized Qwen2 (q 256,
// k and v 64 wide biases, tied head), r = 8 on q_proj and v_proj, batch 2, seq 64, every layer or
// layers 2 and 3, fp32 and autocast bf16; the probe's adapters take no input cast, as
// lora_llama_probe.py's): trainable and saved bytes exact in all twelve. With "all", layers
// before the first adapted one keep what their biases' gradient needs passed through them.
TEST_CASE("bias=all / lora_only: Qwen2's q, k, v biases train") {
  models::llama_config g{32000, 256, 4, 8, 2, 688, 2048, 64, false, 0};
  g.qkv_bias = true;
  g.tied_head = true;
  g = models::hand_written_decoder(g);  // the probe's written-out decoder
  struct measured {
    models::peft_bias bias;
    models::layer_set layers;
    bool bf16;
    std::int64_t trainable, saved;
  };
  using enum models::peft_bias;
  for (const auto& m : {measured{none, {}, false, 26624, 8359936}, measured{none, {2, 3}, false, 13312, 4130816},
                        measured{all, {}, false, 28160, 8491008}, measured{all, {2, 3}, false, 14848, 8212480},
                        measured{lora_only, {}, false, 27904, 8359936}, measured{lora_only, {2, 3}, false, 13952, 4130816},
                        measured{none, {}, true, 26624, 28000256}, measured{none, {2, 3}, true, 13312, 22040576},
                        measured{all, {}, true, 28160, 28131328}, measured{all, {2, 3}, true, 14848, 27842560},
                        measured{lora_only, {}, true, 27904, 28000256}, measured{lora_only, {2, 3}, true, 13952, 22040576}}) {
    const training plan{.batch = 2, .precision = m.bf16 ? amp_bf16 : fp32, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
    const models::lora_config l{.rank = 8, .targets = q_proj | v_proj, .cast_input = false, .layers_to_transform = m.layers, .bias = m.bias};
    const auto b = budget_totals(models::llama_lora(g, l), plan, devices::a100_80gb);
    INFO("bias " << static_cast<int>(m.bias) << " layers " << m.layers.bits[0] << " bf16 " << m.bf16);
    CHECK(b.trainable_count == m.trainable);
    CHECK(models::lora_counts(g, l).trainable == m.trainable);
    CHECK(b.parameter_count == models::lora_counts(g, l).all);
    CHECK(b.saved_activations == m.saved);
  }
  // the biases' gradients and AdamW state: 4 · (256 + 64 + 64) fp32 values more than without
  const training amp{.batch = 2, .precision = amp_bf16};
  const auto with = budget_totals(models::llama_lora(g, {.rank = 8, .bias = all}), amp, devices::a100_80gb);
  const auto without = budget_totals(models::llama_lora(g, {.rank = 8}), amp, devices::a100_80gb);
  CHECK(with.optimizer_state - without.optimizer_state == 2 * 4 * 4 * (256 + 64 + 64));
  // a bf16 base's biases train in bf16 (PEFT upcasts the adapters only): bf16 AdamW state
  const auto bf16_base = budget_totals(models::llama_lora(g, {.rank = 8, .base = base_weights::bf16, .bias = all}), amp, devices::a100_80gb);
  const auto bf16_none = budget_totals(models::llama_lora(g, {.rank = 8, .base = base_weights::bf16}), amp, devices::a100_80gb);
  CHECK(bf16_base.optimizer_state - bf16_none.optimizer_state == 2 * 2 * 4 * (256 + 64 + 64));
  // no biases (Llama): PEFT changes nothing and raises nothing; neither does the budget
  const models::llama_config llama{32000, 256, 4, 8, 2, 688, 2048, 64, false, 0};
  CHECK(budget_totals(models::llama_lora(llama, {.rank = 8, .bias = all}), amp, devices::a100_80gb).total() ==
        budget_totals(models::llama_lora(llama, {.rank = 8}), amp, devices::a100_80gb).total());
  CHECK_THROWS_WITH(models::gpt_lora(models::gpt2_small(64), {.rank = 8, .targets = c_attn, .bias = all}), Catch::Contains("modelled on the Llama family"));
}

// layers_to_transform at compile time: TinyLlama-1.1B's sizes (22 layers, width 2048, 32 q / 4 kv
// heads of 64: v_proj 2048 -> 256), r = 8 on q_proj and v_proj of its last 4 layers (PEFT's
// layers_to_transform=list(range(18, 22))): 4 · 8 · ((2048 + 2048) + (2048 + 256)) = 204,800.
namespace {
constexpr models::llama_config tinyllama{32000, 2048, 22, 32, 4, 5632, 2048, 256, false, 0};
constexpr models::lora_config last_four{.rank = 8, .layers_to_transform = models::layer_set::range(18, 22)};
}  // namespace
static_assert(models::lora_counts(tinyllama, last_four).trainable == 204'800);
static_assert(budget_totals(models::llama_lora(tinyllama, last_four), training{.batch = 1, .precision = amp_bf16}, devices::a100_80gb).trainable_count ==
              204'800);
