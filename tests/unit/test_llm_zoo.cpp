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
// Qwen/Qwen3-0.6B ("0.6B", 0.44B without the embedding) and Qwen/Qwen3-8B ("8.2B"): the sums of
// their config.json sizes (tests/cli/data/hf/README.md), q_norm and k_norm (128 each) per layer.
static_assert(models::llama_parameter_count(models::qwen3_0_6b()) == 596'049'920);
static_assert(models::llama_parameter_count(models::qwen3_8b()) == 8'190'735'360);
// Qwen3-8B, LoRA r=16 on all-linear: 36 x 16 x ((4096 + 4096) · 2 + (4096 + 1024) · 2 + (4096 + 12288) · 3)
static_assert(models::lora_counts(models::qwen3_8b(), {16, all_linear, 0, base_weights::same}).trainable == 43'646'976);
// google/gemma-3-1b-it ("1B"): four norms and q/k norms a layer, the tied embedding once.
static_assert(models::llama_parameter_count(models::gemma3_1b()) == 999'885'952);
// google/gemma-3-270m ("270M"): 18 layers of width 640, the same 262,144-token table
static_assert(models::llama_parameter_count(models::gemma3_270m()) == 268'098'176);
// allenai/OLMo-2-0425-1B and OLMo-2-1124-7B: q_norm, k_norm over the whole projections (2 · width a layer), untied head
static_assert(models::llama_parameter_count(models::olmo2_1b()) == 1'484'916'736);
static_assert(models::llama_parameter_count(models::olmo2_7b()) == 7'298'617'344);
// ibm-granite/granite-3.1-2b-base ("2.5B"): Llama's layers, tied head; the multipliers hold no parameters
static_assert(models::llama_parameter_count(models::granite3_2b()) == 2'533'531'648);
// Olmo-3-1025-7B ("7B"): OLMo 2's layers at vocab_size 100278 (the windows hold no parameters)
static_assert(models::llama_parameter_count(models::olmo3_7b()) == 7'298'011'136);
// google/gemma-2-2b ("2.6B") and gemma-2-9b ("9B"): four norms a layer, no q/k norms, the tied embedding once
static_assert(models::llama_parameter_count(models::gemma2_2b()) == 2'614'341'888);
static_assert(models::llama_parameter_count(models::gemma2_9b()) == 9'241'705'984);
// google/gemma-2-27b ("27B"): heads of 128 (32 · 128 ≠ 4608)
static_assert(models::llama_parameter_count(models::gemma2_27b()) == 27'227'128'320);
// T5ForConditionalGeneration (google-t5/t5-small ... t5-11b): the shared embedding once.
static_assert(models::t5_parameter_count(models::t5_small()) == 60'506'624);
static_assert(models::t5_parameter_count(models::t5_base()) == 222'903'552);
static_assert(models::t5_parameter_count(models::t5_large()) == 737'668'096);
static_assert(models::t5_parameter_count(models::t5_3b()) == 2'851'598'336);
static_assert(models::t5_parameter_count(models::t5_11b()) == 11'307'321'344);

// PEFT's r·(in + out) per adapted Linear (LoraConfig(r=8, target_modules=...)):
// Phi-3-mini qkv_proj (3072 -> 9216), o_proj: 32 x 8 x (12288 + 6144)
static_assert(models::lora_counts(models::phi3_mini(), {8, qkv_proj | o_proj, 0, base_weights::same}).trainable == 4'718'592);
// ... and all-linear: + gate_up_proj (3072 -> 16384), down_proj (8192 -> 3072)
static_assert(models::lora_counts(models::phi3_mini(), {8, fused_all_linear, 0, base_weights::same}).trainable == 12'582'912);
// Mixtral-8x7B q_proj, v_proj (PEFT's default for mixtral): Mistral-7B's 3,407,872; all params
// 46,702,792,704 + 3,407,872
static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), {}, {8, q_proj | v_proj, 0, base_weights::same}).trainable == 3'407'872);
static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), {}, {8, q_proj | v_proj, 0, base_weights::same}).all == 46'706'200'576);
// transformers 4.x's expert modules (moe_impl::expert_modules), every expert's w1, w2, w3: 32 layers x 8 experts x 3 x 8 x (4096 + 14336)
constexpr models::moe_config transformers4_experts{8, 2, 100, moe_impl::expert_modules};
static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), transformers4_experts, {8, w1 | w2 | w3, 0, base_weights::same}).trainable == 113'246'208);
// the router (block_sparse_moe.gate, 4096 -> 8): 32 x 8 x (4096 + 8)
static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), transformers4_experts, {8, router_gate, 0, base_weights::same}).trainable == 1'050'624);
// PEFT's all-linear (every nn.Linear but lm_head): in 4.x attention, experts and router; in transformers 5 (the
// default, MixtralExperts' 3-D parameters and MixtralTopKRouter's weight are no Linears) the attention alone,
// 32 x 8 x ((4096 + 4096) x 2 + (4096 + 1024) x 2)
static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), transformers4_experts, {8, all_linear, 0, base_weights::same}).trainable ==
              6'815'744 + 113'246'208 + 1'050'624);
static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), {}, {8, all_linear, 0, base_weights::same}).trainable == 6'815'744);
static_assert(parse_lora_targets("qkv_proj,gate_up_proj") == (qkv_proj | gate_up_proj));
// Qwen2 and Gemma (PEFT r·(in + out); q_proj width -> heads·head_dim, v_proj width -> kv_heads·head_dim):
// Qwen2-0.5B q_proj, v_proj: 24 x 8 x ((896 + 896) + (896 + 128)); all params count the tied
// head and the frozen biases once: 494,032,768 + 540,672
static_assert(models::lora_counts(models::qwen2_0_5b(), {8, q_proj | v_proj, 0, base_weights::same}).trainable == 540'672);
static_assert(models::lora_counts(models::qwen2_0_5b(), {8, q_proj | v_proj, 0, base_weights::same}).all == 494'573'440);
// Qwen2-7B: 28 x 8 x ((3584 + 3584) + (3584 + 512))
static_assert(models::lora_counts(models::qwen2_7b(), {8, q_proj | v_proj, 0, base_weights::same}).trainable == 2'523'136);
// Gemma-2B: 18 x 8 x ((2048 + 8·256) + (2048 + 256))
static_assert(models::lora_counts(models::gemma_2b(), {8, q_proj | v_proj, 0, base_weights::same}).trainable == 921'600);
static_assert(parse_lora_targets("w1,w2,w3,gate") == (w1 | w2 | w3 | router_gate));

/// `g` (a family's flags and the sequence length) at measure26_llm.py's small sizes: vocab 32000, width 256,
/// ffn 688, context 2048; `layers` layers of `heads` q / `kv_heads` key/value heads of `head_dim` (0: width / heads).
// measure26_llm.py's decoders are written out after transformers' code: no DynamicCache, RoPE
// tables of the batch's shape passed to checkpointed layers positionally, 4.x's MoE experts
// (op_rules.md L27, L28); transformers 5 itself does none of these (pytorch-2.6-cpu-transformers.json)

static models::llama_config at_measured_sizes(models::llama_config g, std::int64_t layers, std::int64_t heads, std::int64_t kv_heads,
                                              std::int64_t head_dim = 0) {
  g.vocab = 32000, g.width = 256, g.ffn = 688, g.context = 2048;
  g.layers = layers, g.heads = heads, g.kv_heads = kv_heads, g.head_dim = head_dim;
  return models::hand_written_decoder(g);
}

TEST_CASE("LoRA on Phi-3 and Mixtral: the simulated models hold PEFT's counts") {
  const auto phi = models::phi3_mini(128);
  for (const std::int64_t targets : {std::int64_t{qkv_proj | o_proj}, std::int64_t{fused_all_linear}, std::int64_t{gate_up_proj}}) {
    const models::lora_config l{8, targets, 0, base_weights::same};
    const auto b = budget_totals(models::phi3_lora(phi, l), training{.batch = 1, .precision = pure_bf16}, devices::a100_80gb);
    CHECK(b.trainable_count == models::lora_counts(phi, l).trainable);
    // the frozen base: bf16 buffers, the norms frozen parameters
    CHECK(b.parameter_count - b.trainable_count + b.buffers / 2 == models::llama_parameter_count(phi));
  }
  const auto mix = models::mixtral_8x7b(128);
  const models::lora_config qv{8, q_proj | v_proj, 0, base_weights::same};
  const auto b = budget_totals(models::mixtral_lora(mix, {}, qv), training{.batch = 1, .precision = pure_bf16}, devices::h200);
  CHECK(b.trainable_count == 3'407'872);
  CHECK(b.parameter_count + b.buffers / 2 == 46'706'200'576);
  // Phi-3's separate names and Mixtral's experts are errors, not a different model
  CHECK_THROWS_WITH(models::phi3_lora(phi, qv), Catch::Contains("unknown LoRA target module"));
  CHECK_THROWS_WITH(models::llama_lora(phi, qv), Catch::Contains("LoRA is modelled on Llama-family decoders"));
  // w1 names nothing in transformers 5's Mixtral; 4.x's expert Linears are counted, not simulated
  CHECK_THROWS_WITH(models::mixtral_lora(mix, {}, models::lora_config{8, w1, 0, base_weights::same}), Catch::Contains("transformers 5's Mixtral has no such modules"));
  CHECK_THROWS_WITH(models::mixtral_lora(mix, transformers4_experts, models::lora_config{8, w1, 0, base_weights::same}), Catch::Contains("unknown LoRA target module"));
  CHECK_THROWS_WITH(models::mixtral_lora(mix, {}, models::lora_config{8, gate_proj, 0, base_weights::same}), Catch::Contains("unknown LoRA target module"));
  // all-linear there: the attention's four projections, as q_proj,k_proj,v_proj,o_proj
  const models::lora_config four{8, q_proj | k_proj | v_proj | o_proj, 0, base_weights::same};
  CHECK(budget_totals(models::mixtral_lora(mix, {}, models::lora_config{8, all_linear, 0, base_weights::same}), training{.batch = 1, .precision = pure_bf16},
                      devices::h200)
            .total() == budget_totals(models::mixtral_lora(mix, {}, four), training{.batch = 1, .precision = pure_bf16}, devices::h200).total());
}

TEST_CASE("Phi-3's fused projections under LoRA: one adapter for q, k and v") {
  // Against q_proj, k_proj, v_proj adapters on the unfused layers, each layer keeps one [L, 8]
  // adapter intermediate instead of three (`* scaling` saves no scalar in PyTorch 2.x, op_rules.md
  // 2.6 #5); without the config's use_cache also the whole [L, 3·3072] qkv output (SDPA saves v, a
  // slice of it) instead of v alone, where with it DynamicCache's torch.cat copies v (op_rules.md L27).
  const training plan{.batch = 2, .precision = pure_bf16};
  const std::int64_t bf16 = 2, rows = 2 * 256;
  for (const bool cache : {true, false}) {
    auto phi = models::phi3_mini(256);
    phi.use_cache = cache;
    auto unfused = phi;
    unfused.fused_projections = false;
    const auto fused = budget_totals(models::phi3_lora(phi, {8, qkv_proj, 0, base_weights::same}), plan, devices::a100_80gb);
    const auto separate = budget_totals(models::llama_lora(unfused, {8, q_proj | k_proj | v_proj, 0, base_weights::same}), plan, devices::a100_80gb);
    CHECK(fused.trainable_count < separate.trainable_count);
    const auto packed_kept = cache ? 0 : rows * 3 * 3072 * bf16 - rows * 3072 * bf16;
    CHECK(fused.saved_activations - separate.saved_activations == 32 * (packed_kept - 2 * rows * 8 * bf16));
  }
}

TEST_CASE("Qwen2 and Gemma: the simulated models hold the published parameter counts") {
  for (const auto& g : {models::qwen2_0_5b(64), models::qwen2_7b(64), models::gemma_2b(64)})
    CHECK(budget_totals(models::llama(g), training{.batch = 1}, devices::a100_80gb).parameter_count == models::llama_parameter_count(g));
  // a tied head is the embedding's weight: untying Qwen2-0.5B adds vocab x width
  auto untied = models::qwen2_0_5b(64);
  untied.tied_head = false;
  CHECK(budget_totals(models::llama(untied), training{.batch = 1}, devices::a100_80gb).parameter_count == 494'032'768 + 151'936LL * 896);
}

TEST_CASE("Qwen3: q_norm and k_norm keep what an RMSNorm keeps, and are parts train_only names") {
  // measure26_llm.py's qwen3_2l sizes: 8 q / 2 kv heads of 64 channels on width 256, batch 2, 64 tokens
  auto g = models::qwen3_0_6b(64);
  g.vocab = 32000, g.width = 256, g.layers = 2, g.heads = 8, g.kv_heads = 2, g.ffn = 688, g.head_dim = 64;
  g = models::hand_written_decoder(g);
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto with = budget_totals(models::llama(g), cpu, devices::a100_80gb);
  auto plain = g;
  plain.qk_norm = false;
  const auto without = budget_totals(models::llama(plain), cpu, devices::a100_80gb);
  CHECK(with.parameter_count - without.parameter_count == 2 * 2 * 64);
  // PyTorch 2.6 (op_rules.md 2.6 #6): an fp32 RMSNorm keeps its input, its [rows, 1] rsqrt and the
  // normalized tensor; here on q ([2, 64, 8·64]) and k ([2, 64, 2·64]) of each of the 2 layers
  const std::int64_t q = 2 * 64 * 512 * 4, k = 2 * 64 * 128 * 4, q_rows = 2 * 64 * 8 * 4, k_rows = 2 * 64 * 2 * 4;
  CHECK(with.saved_activations - without.saved_activations == 2 * (2 * q + q_rows + 2 * k + k_rows));
  // the measured step (pytorch-2.6-cpu-llm.json qwen3_2l_b2_t64): 8,795,648 B saved
  CHECK(with.saved_activations == 8'795'648);
  // --freeze-all-but self_attn.q_norm: the norm's 64 weights of each layer train, nothing else
  const auto only = budget_totals(models::llama(g), training{.batch = 1, .train_only = "self_attn.q_norm"}, devices::a100_80gb);
  CHECK(only.trainable_count == 2 * 64);
}

TEST_CASE("Phi-3's partial RoPE: narrower tables, and the attention output copied on the CPU") {
  // measure26_llm.py's phi3_partial_rotary_2l sizes: 8 heads of 32 channels, 24 of them rotated
  auto g = models::phi3_mini(64);
  g.vocab = 32000, g.width = 256, g.layers = 2, g.heads = 8, g.kv_heads = 8, g.ffn = 688;
  g = models::hand_written_decoder(g);  // measure26_llm.py's Phi3
  auto partial = g;
  partial.rotary_dim = 24;
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto full = budget_totals(models::phi3(g), cpu, devices::a100_80gb), part = budget_totals(models::phi3(partial), cpu, devices::a100_80gb);
  CHECK(part.parameter_count == full.parameter_count);
  // modeling_phi3.py's RoPE concatenates at either width (q and k laid out [B, H, T, d]: the flash
  // output's copy for o_proj in both): the partial one keeps the two [2, 64, 32 - 24] fp32 tables fewer
  CHECK(part.saved_activations - full.saved_activations == -2 * (2 * 64 * 8 * 4));
  CHECK(part.saved_activations == 6'655'488);  // pytorch-2.6-cpu-llm.json phi3_partial_rotary_2l_b2_t64
  CHECK(full.saved_activations == 6'663'680);  // pytorch-2.6-cpu-llm.json phi3_2l_b2_t64
  // an odd or too wide rotary width is refused
  partial.rotary_dim = 33;
  CHECK_THROWS(budget_totals(models::phi3(partial), cpu, devices::a100_80gb));
}

TEST_CASE("A sliding window through SDPA: transformers' mask from the window's length on") {
  // measure26_llm.py's window*_kv8 sizes: 8 heads of 32 channels, batch 2, 64 tokens
  auto g = models::llama2_7b(64);
  g.vocab = 32000, g.width = 256, g.layers = 2, g.heads = 8, g.kv_heads = 8, g.ffn = 688;
  g = models::hand_written_decoder(g);
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  auto saved_with_window = [&](std::int64_t window) {
    auto w = g;
    w.sliding_window = window;
    return budget_totals(models::llama(w), cpu, devices::a100_80gb).saved_activations;
  };
  // 64 tokens under a window of 128: no mask, as without a window
  CHECK(saved_with_window(128) == saved_with_window(0));
  // a window of 32 or 64 (kv_length >= window): each layer's flash kernel keeps the [2, 1, 64, 64] fp32 mask
  CHECK(saved_with_window(32) - saved_with_window(0) == 2 * (2 * 64 * 64 * 4));
  CHECK(saved_with_window(64) == saved_with_window(32));
  CHECK(saved_with_window(32) == 5'942'784);  // pytorch-2.6-cpu-llm.json window32_kv8_2l_b2_t64
  // flash_attention_2 takes the window as an argument: no mask
  auto fa2 = g;
  fa2.sliding_window = 32, fa2.kernel_window = true;
  CHECK(budget_totals(models::llama(fa2), cpu, devices::a100_80gb).saved_activations == saved_with_window(0));
}

// A collator's padded batch (op_rules.md L32): transformers skips a causal mask only while
// padding_mask.all() (_ignore_causal_mask_sdpa), so every layer's SDPA gets a bool [B, 1, T, T] mask,
// and with a mask sdpa_attention_forward repeats grouped-query k and v to every head (repeat_kv).
TEST_CASE("A padded batch: every layer's SDPA gets a mask, and grouped-query k and v repeated") {
  // pytorch-2.6-cpu-transformers.json hf_llama_b2_t64 and hf_llama_b2_t64_padded (transformers 5.12)
  auto g = models::llama2_7b(64);
  g.vocab = 32000, g.width = 256, g.layers = 2, g.heads = 8, g.kv_heads = 2, g.ffn = 688;
  auto padded = g;
  padded.padded_batch = true;
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto saved = [](const models::llama_config& c, const training& t) { return budget_totals(models::llama(c), t, devices::h100_80gb).saved_activations; };
  // the CPU: without a mask enable_gqa takes the math path (the [2, 8, 64, 64] probabilities kept); with one the
  // flash kernel keeps the repeated k and v and the float mask instead
  CHECK(saved(g, cpu) == 6'376'960);
  CHECK(saved(padded, cpu) == 5'926'400);
  // CUDA, bf16 autocast: cuDNN reads the grouped heads (k, v [128, 2 x 32]) without a mask; with one the efficient
  // kernel keeps k and v repeated to 8 heads and the [2, 1, 64, 64] bf16 mask
  const training cuda{.batch = 2, .precision = amp_bf16};
  const std::int64_t kv = 128 * 2 * 32 * 2, repeated = 4 * kv, mask = 2 * 64 * 64 * 2;
  CHECK(saved(padded, cuda) - saved(g, cuda) == g.layers * (2 * (repeated - kv) + mask));
  // flash_attention_2 unpads the batch into copies of its real tokens instead: not modelled, an error
  auto fa2 = padded;
  fa2.kernel_window = true;
  CHECK_THROWS_WITH(saved(fa2, cuda), Catch::Contains("under flash_attention_2"));
}

TEST_CASE("transformers 5's BERT on a padded batch keeps every layer's mask beside a fused kernel (op_rules.md L33)") {
  // measure26_hf.py's bert and bert-no-attention-dropout: BertForSequenceClassification, width 256, 2 layers of 8
  // heads, 2 x 64 tokens; transformers 5's default SDPA
  models::bert_config b = models::bert_base(64);
  b.width = 256, b.layers = 2, b.heads = 8, b.ffn = 1024, b.attention = attention_impl::separate_qkv_sdpa;
  const auto saved = [](const models::bert_config& c, const training& t) {
    return budget_totals(models::bert_seq_cls(c, 2, c.dropout_percent), t, devices::h100_80gb).saved_activations;
  };
  const auto pad = [](models::bert_config c) {
    c.padded_batch = true;
    return c;
  };
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  // dropout 0.1: the 2.6 CPU's math path keeps the probabilities either way; the mask's add makes a score tensor it
  // does not keep (measured: 6,701,568 B both)
  CHECK(saved(b, cpu) == 6'696'960);
  CHECK(saved(pad(b), cpu) == saved(b, cpu));
  // no attention dropout: the flash kernel, which keeps each layer's float [2, 1, 64, 64] mask (measured +65,536 B)
  auto no_dropout = b;
  no_dropout.attention_dropout_percent = 0;
  CHECK(saved(pad(no_dropout), cpu) - saved(no_dropout, cpu) == 2 * (2 * 64 * 64 * 4));
  // CUDA, fp16 autocast: flash without a mask, the efficient kernel keeping the fp16 mask with one
  const training cuda{.batch = 2, .precision = amp_fp16};
  CHECK(saved(pad(b), cuda) - saved(b, cuda) == 2 * (2 * 64 * 64 * 2));
  // under PEFT's LoRA the same attention, the same mask
  models::lora_config lora{8, bert_query | bert_value, 10, base_weights::same};
  lora.labels = 2;
  const auto lora_saved = [&](const models::bert_config& c) {
    return budget_totals(models::bert_lora_seq_cls(c, lora, 10), cuda, devices::h100_80gb).saved_activations;
  };
  CHECK(lora_saved(pad(b)) - lora_saved(b) == 2 * (2 * 64 * 64 * 2));
  // transformers 4's eager attention adds its [B, 1, 1, T] mask padded or not: nothing changes
  auto eager = b;
  eager.attention = attention_impl::separate_qkv;
  CHECK(saved(pad(eager), cuda) == saved(eager, cuda));
  // the option on an attention that is neither: an error, not a silent no-op
  CHECK_THROWS_WITH(budget_totals(sequential(tokens(64), embedding(100, 64), attention(64, heads(4), attention_impl::flash, padded_batch)), cuda, devices::h100_80gb),
                    Catch::Contains("padded_batch is transformers' mask"));
}

TEST_CASE("transformers 5's GPT-2: one c_attn, the DynamicCache's k and v, and a padded batch's causal mask (op_rules.md L33)") {
  // measure26_hf.py's gpt2: GPT2LMHeadModel, width 256, 2 layers of 8 heads, 2 x 64 tokens, dropout 0.1, SDPA
  models::gpt_config g{32000, 1024, 256, 2, 8, 10, 64, false};
  g.attention_dropout_percent = 10, g.attention = attention_impl::flash, g.linear_head = true, g.gelu_new = true, g.packed_c_attn = true;
  g.use_cache = true;
  const auto saved = [](const models::gpt_config& c, const training& t) { return budget_totals(models::gpt(c), t, devices::h100_80gb).saved_activations; };
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  training cpu_bf16 = cpu;
  cpu_bf16.precision = amp_bf16;
  // one Conv1D c_attn: under autocast one bf16 copy of its input, where q and kv Linears of their own (the
  // reference GPT) cast it twice (measured: hf_gpt2_b2_t64_bf16 26,024,448 B saved; the same in fp32)
  auto q_kv = g;
  q_kv.packed_c_attn = false;
  CHECK(saved(g, cpu_bf16) == 26'024'448);
  CHECK(saved(q_kv, cpu_bf16) - saved(g, cpu_bf16) == 2 * (2 * 64 * 256 * 2));
  CHECK(saved(q_kv, cpu) == saved(g, cpu));
  const auto pad = [](models::gpt_config c) {
    c.padded_batch = true;
    return c;
  };
  // padded, dropout 0.1: the CPU's math path, nothing more kept (measured 9,837,056 B both); no attention
  // dropout: the flash kernel keeps each layer's float [2, 1, 64, 64] mask (measured +65,536 B)
  CHECK(saved(pad(g), cpu) == saved(g, cpu));
  auto no_dropout = g;
  no_dropout.attention_dropout_percent = 0;
  CHECK(saved(pad(no_dropout), cpu) - saved(no_dropout, cpu) == 2 * (2 * 64 * 64 * 4));
  // that kernel keeps the k and v that DynamicCache.update copied, not views of c_attn's output (measured
  // 8,796,672 B); without a cache (use_cache false) k and v are views of the output q keeps whole
  CHECK(saved(no_dropout, cpu) == 8'796'672);
  auto uncached = no_dropout;
  uncached.use_cache = false;
  CHECK(saved(no_dropout, cpu) - saved(uncached, cpu) == 2 * 2 * (2 * 64 * 256 * 4));
  // the cache is transformers' GPT-2's: on another attention the option is an error
  CHECK_THROWS_WITH(budget_totals(sequential(tokens(64), embedding(100, 64), attention(64, heads(4), attention_impl::flash, training_kv_cache)), cpu, devices::h100_80gb),
                    Catch::Contains("training_kv_cache is transformers' DynamicCache"));
  // CUDA, bf16 autocast: the efficient kernel in flash's place, keeping the bf16 mask
  const training cuda{.batch = 2, .precision = amp_bf16};
  CHECK(saved(pad(g), cuda) - saved(g, cuda) == 2 * (2 * 64 * 64 * 2));
  // the eager attention adds a [B, 1, T, T] mask padded or not
  auto eager = g;
  eager.attention = attention_impl::split_qkv;
  CHECK(saved(pad(eager), cuda) == saved(eager, cuda));
}

TEST_CASE("T5's own CrossEntropyLoss under CPU autocast runs in fp32 (autocast_mode.cpp's CPU fp32 list; op_rules.md L35)") {
  // measure26_hf.py's t5: T5ForConditionalGeneration, d_model 256, 2 + 2 layers of 8 heads of 32, 2 x 64 tokens
  const models::t5_config t{32000, 256, 32, 1024, 2, 2, 8, 32, 10, 64, 64};
  training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  cpu.loss = loss_kind::cross_entropy, cpu.output_held = false;
  training cpu_bf16 = cpu;
  cpu_bf16.precision = amp_bf16;
  const auto bf16 = budget_totals(models::t5(t), cpu_bf16, devices::h100_80gb);
  CHECK(bf16.saved_activations == 37'494'784);  // measured, to the byte
  // after forward the loss keeps fp32 log-probabilities of the [128, 32000] bf16 logits: an fp32 copy's
  // log_softmax (measured 54,321,712 B after forward; the bf16 log_softmax it was taken for kept half)
  const std::int64_t log_probs = 2 * 64 * 32000 * 4;
  CHECK(bf16.after_forward - bf16.saved_activations >= log_probs);
  CHECK(bf16.after_forward == 54'181'730);
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

TEST_CASE("Gemma 3 under training::checkpoint_blocks: each decoder layer a checkpoint, not a period of six") {
  // measure26_llm.py's gemma3_7l sizes: 4 q / 1 kv heads of 64 on width 256, window 32, batch 2, 64 tokens
  auto g = models::gemma3_1b(64);
  g.vocab = 32000, g.width = 256, g.heads = 4, g.kv_heads = 1, g.head_dim = 64, g.ffn = 688, g.context = 2048, g.sliding_window = 32;
  g = models::hand_written_decoder(g);
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  auto ckpt = cpu;
  ckpt.checkpoint_blocks = true;
  const auto saved = [&](std::int64_t layers, const training& t, bool config_flag) {
    auto c = g;
    c.layers = layers, c.checkpoint_blocks = config_flag;
    return models::visit_gemma3(c, [&](const auto& m) { return budget_totals(m, t, devices::a100_80gb).saved_activations; });
  };
  // the measured step (pytorch-2.6-cpu-llm.json gemma3_7l_b2_t64_ckpt: transformers checkpoints
  // every GradientCheckpointingLayer): 1,448,452 B saved, by either flag
  CHECK(saved(7, ckpt, false) == 1'448'452);
  CHECK(saved(7, cpu, true) == 1'448'452);
  // six more layers (a second period) keep six more layer inputs, [2, 64, 256] fp32 each: a
  // period checkpointed as one block would keep one
  CHECK(saved(13, ckpt, false) - saved(7, ckpt, false) == 6 * 2 * 64 * 256 * 4);
  CHECK(saved(13, ckpt, false) == saved(13, cpu, true));
}

TEST_CASE("LoRA on Gemma 3: PEFT's counts, and the saved bytes measured on PyTorch 2.6") {
  // measure26_llm.py's gemma3_7l sizes (above), every base weight frozen, r=8 on all-linear
  auto g = models::gemma3_1b(64);
  g.vocab = 32000, g.width = 256, g.layers = 7, g.heads = 4, g.kv_heads = 1, g.head_dim = 64, g.ffn = 688, g.context = 2048, g.sliding_window = 32;
  g = models::hand_written_decoder(g);
  const models::lora_config l{8, all_linear, 0, base_weights::same};
  training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto totals = [&](const training& t) {
    return models::visit_gemma3_lora(g, l, [&](const auto& m) { return budget_totals(m, t, devices::a100_80gb); });
  };
  const auto plain = totals(cpu);
  CHECK(plain.trainable_count == models::lora_counts(g, l).trainable);
  CHECK(plain.parameter_count == models::lora_counts(g, l).all);
  CHECK(plain.trainable_count == 251'776);  // 7 x 8 x ((256 + 256) · 2 + (256 + 64) · 2 + (256 + 688) · 3)
  // pytorch-2.6-cpu-llm.json gemma3_7l_lora_all_r8_b2_t64 and its _ckpt twin (each layer checkpointed)
  CHECK(plain.saved_activations == 19'741'696);
  cpu.checkpoint_blocks = true;
  CHECK(totals(cpu).saved_activations == 1'185'280);
  // layers_to_transform: the layers alternate, so a selection is refused
  auto some = l;
  some.layers_to_transform = {0, 1, 2};
  CHECK_THROWS_WITH(models::visit_gemma3_lora(g, some, [](const auto&) { return 0; }), Catch::Contains("on Gemma 2, Gemma 3 or OLMo 3 is not modelled"));
}

TEST_CASE("OLMo 2: norms after the sublayers and q/k norms over the projections, measured on PyTorch 2.6") {
  // measure26_llm.py's olmo2_2l sizes: width 256, 8 q / 2 kv heads of 32, ffn 688, untied head, batch 2, 64 tokens
  auto g = at_measured_sizes(models::olmo2_1b(64), 2, 8, 2);
  training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto full = budget_totals(models::olmo2(g), cpu, devices::a100_80gb);
  CHECK(full.parameter_count == models::llama_parameter_count(g));
  // q_norm over 8 · 32 channels and k_norm over 2 · 32 a layer, beside the two sublayer norms
  auto plain = g;
  plain.olmo2 = false;
  CHECK(models::llama_parameter_count(g) - models::llama_parameter_count(plain) == 2 * (256 + 64));
  // pytorch-2.6-cpu-llm.json: olmo2_2l_b2_t64 7,050,752 B saved, olmo2_2l_ckpt_b2_t64 689,664 B
  CHECK(full.saved_activations == 7'050'752);
  cpu.checkpoint_blocks = true;
  CHECK(budget_totals(models::olmo2(g), cpu, devices::a100_80gb).saved_activations == 689'664);
  cpu.checkpoint_blocks = false;
  // LoRA r=8 on all-linear (olmo2_2l_lora_all_r8_b2_t64: 5,992,960 B saved), PEFT's count
  const models::lora_config l{8, all_linear, 0, base_weights::same};
  const auto lora = budget_totals(models::olmo2_lora(g, l), cpu, devices::a100_80gb);
  CHECK(lora.trainable_count == models::lora_counts(g, l).trainable);
  CHECK(lora.parameter_count == models::lora_counts(g, l).all);
  CHECK(lora.saved_activations == 5'992'960);
  // the Llama builder would put the norms before the sublayers: refused
  CHECK_THROWS_WITH(models::llama(g), Catch::Contains("built by models::olmo2"));
}

// transformers 5.12's own OLMo 2 with bf16 weights (pytorch-2.6-cpu-transformers.json, hf-cpu-configs/olmo2.json:
// width 256, 2 layers, 8 q / 2 kv heads of 32, ffn 688, batch 2, 64 tokens; model.to(torch.bfloat16), AdamW on the
// bf16 weights): Olmo2RotaryEmbedding returns its cos and sin in fp32, which the rotation's products keep (op_rules.md L30)
TEST_CASE("OLMo 2 with bf16 weights keeps fp32 RoPE tables, as transformers 5.12 computes them") {
  auto g = models::olmo2_1b(64);
  g.vocab = 32000, g.width = 256, g.layers = 2, g.heads = 8, g.kv_heads = 2, g.ffn = 688, g.context = 2048;
  training bf16{.batch = 2, .precision = pure_bf16, .master_weights = false, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  CHECK(budget_totals(models::olmo2(g), bf16, devices::a100_80gb).saved_activations == 5'166'592);  // hf_olmo2_b2_t64_bf16weights
  // the same layers with the tables in the hidden states' type (OLMo 3's rotary embedding casts them): 2 tables of
  // [1, 64, 32] at 2 bytes a channel instead of 4
  auto cast_tables = [&](const auto& attention) {
    return sequential(tokens(64), embedding(32000, 256), repeat(2, sequential(residual(attention, olmo2_rms_norm()))), olmo2_rms_norm(), linear(32000, no_bias));
  };
  const auto common = [](auto... more) { return attention(256, heads(8), attention_impl::flash, kv_heads(2), no_bias, rotary, olmo2_qk_norm, training_kv_cache, more...); };
  const auto fp32_tables = budget_totals(cast_tables(common(fp32_rope_tables)), bf16, devices::a100_80gb).saved_activations;
  const auto bf16_tables = budget_totals(cast_tables(common()), bf16, devices::a100_80gb).saved_activations;
  CHECK(fp32_tables - bf16_tables == 2 * 64 * 32 * (4 - 2));
  // with fp32 weights the hidden states are fp32 and so are the tables either way
  training fp32 = bf16;
  fp32.precision = precision_mode::fp32, fp32.master_weights = true;
  CHECK(budget_totals(cast_tables(common(fp32_rope_tables)), fp32, devices::a100_80gb).saved_activations ==
        budget_totals(cast_tables(common()), fp32, devices::a100_80gb).saved_activations);
  CHECK(budget_totals(models::olmo2(g), fp32, devices::a100_80gb).saved_activations == 7'034'368);  // hf_olmo2_b2_t64
}

TEST_CASE("OLMo 3: OLMo 2's layers with a window on three of four, measured on PyTorch 2.6") {
  // measure26_llm.py's olmo3_5l sizes: 5 layers (a period of 3 sliding + 1 full, then 1 sliding), window 32 at 64
  // tokens, width 256, 8 q / 2 kv heads of 32, ffn 688, untied head, batch 2
  auto g = models::olmo3_7b(64);
  g.vocab = 32000, g.width = 256, g.layers = 5, g.heads = 8, g.kv_heads = 2, g.ffn = 688, g.context = 2048, g.sliding_window = 32;
  g = models::hand_written_decoder(g);
  training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto totals = [&](const models::llama_config& c, const training& t) {
    return models::visit_olmo3(c, [&](const auto& m) { return budget_totals(m, t, devices::a100_80gb); });
  };
  const auto full = totals(g, cpu);
  CHECK(full.parameter_count == models::llama_parameter_count(g));
  // pytorch-2.6-cpu-llm.json olmo3_5l_b2_t64: 16,084,480 B saved; the same five layers all causal save another
  // amount (op_rules.md L18: a mask, repeat_kv's copies of k and v, and on 2 kv heads another CPU kernel)
  CHECK(full.saved_activations == 16'084'480);
  auto causal = g;
  causal.olmo3 = false, causal.sliding_window = 0;
  CHECK(budget_totals(models::olmo2(causal), cpu, devices::a100_80gb).saved_activations != full.saved_activations);
  // below the window transformers gives SDPA no mask (_ignore_causal_mask_sdpa): every layer as OLMo 2's
  auto short_seq = g, short_causal = causal;
  short_seq.seq = short_causal.seq = 24;
  CHECK(totals(short_seq, cpu).saved_activations == budget_totals(models::olmo2(short_causal), cpu, devices::a100_80gb).saved_activations);
  // olmo3_5l_ckpt_b2_t64: each layer checkpointed (GradientCheckpointingLayer), by either flag
  auto ckpt = cpu;
  ckpt.checkpoint_blocks = true;
  CHECK(totals(g, ckpt).saved_activations == 1'086'976);
  auto flagged = g;
  flagged.checkpoint_blocks = true;
  CHECK(totals(flagged, cpu).saved_activations == 1'086'976);
  // four more layers (a second period) keep four more layer inputs, [2, 64, 256] fp32 each
  auto nine = g;
  nine.layers = 9;
  CHECK(totals(nine, ckpt).saved_activations - totals(g, ckpt).saved_activations == 4 * 2 * 64 * 256 * 4);
  // LoRA r=8 on all-linear (olmo3_5l_lora_all_r8_b2_t64: 13,834,752 B saved), PEFT's count
  const models::lora_config l{8, all_linear, 0, base_weights::same};
  const auto lora = models::visit_olmo3_lora(g, l, [&](const auto& m) { return budget_totals(m, cpu, devices::a100_80gb); });
  CHECK(lora.trainable_count == models::lora_counts(g, l).trainable);
  CHECK(lora.trainable_count == 179'840);  // 5 x 8 x ((256 + 256) · 2 + (256 + 64) · 2 + (256 + 688) · 3)
  CHECK(lora.saved_activations == 13'834'752);
  // the one-layer builders would repeat one window: refused, and so is a selection of layers
  CHECK_THROWS_WITH(models::olmo2(g), Catch::Contains("is built by models::visit_olmo3"));
  CHECK_THROWS_WITH(models::olmo2_lora(g, l), Catch::Contains("is built by models::visit_olmo3"));
  CHECK_THROWS_WITH(models::llama(g), Catch::Contains("not models::llama"));
  auto some = l;
  some.layers_to_transform = {0, 1};
  CHECK_THROWS_WITH(models::visit_olmo3_lora(g, some, [](const auto&) { return 0; }), Catch::Contains("on Gemma 2, Gemma 3 or OLMo 3 is not modelled"));
  // vLLM's manager of alternating windows is not modelled; generate()'s DynamicCache is (test_serving.cpp)
  CHECK_THROWS_WITH(serve(g, serving{.context = 1024, .concurrency = 1}, devices::h100_80gb), Catch::Contains("OLMo 3 with vLLM is not modelled"));
}

TEST_CASE("Gemma 2: four norms a layer, a window on every other layer, soft-capped logits, measured on PyTorch 2.6") {
  // measure26_llm.py's gemma2_5l sizes: width 256, 4 q / 2 kv heads of 64, ffn 688, window 32, tied head, batch 2, 64 tokens
  auto g = at_measured_sizes(models::gemma2_2b(64), 5, 4, 2, 64);
  g.sliding_window = 32;
  training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto totals = [&](const models::llama_config& c) { return models::visit_gemma2(c, [&](const auto& m) { return budget_totals(m, cpu, devices::a100_80gb); }); };
  // pytorch-2.6-cpu-llm.json gemma2_5l_b2_t64: 11,822,336 parameters, 33,462,788 B saved
  const auto full = totals(g);
  CHECK(full.parameter_count == models::llama_parameter_count(g));
  CHECK(full.parameter_count == 11'822'336);
  CHECK(full.saved_activations == 33'462'788);
  // final_logit_softcapping keeps tanh's output: one fp32 [2, 64, 32000] tensor
  auto uncapped = g;
  uncapped.logit_softcap = false;
  CHECK(full.saved_activations - totals(uncapped).saved_activations == 2 * 64 * 32000 * 4);
  // below the window (gemma2_5l_b2_t24) no layer gets a mask
  auto short_seq = g;
  short_seq.seq = 24;
  CHECK(totals(short_seq).saved_activations == 12'516'676);
  cpu.checkpoint_blocks = true;  // gemma2_5l_ckpt_b2_t64: each layer checkpointed
  CHECK(totals(g).saved_activations == 17'504'772);
  cpu.checkpoint_blocks = false;
  // LoRA r=8 on all-linear (gemma2_5l_lora_all_r8_b2_t64), PEFT's count: 5 x 8 x ((256 + 256) · 2 + (256 + 128) · 2 + (256 + 688) · 3)
  const models::lora_config l{8, all_linear, 0, base_weights::same};
  const auto lora = models::visit_gemma2_lora(g, l, [&](const auto& m) { return budget_totals(m, cpu, devices::a100_80gb); });
  CHECK(lora.trainable_count == models::lora_counts(g, l).trainable);
  CHECK(lora.trainable_count == 184'960);
  CHECK(lora.saved_activations == 30'588'928);
  // the one-layer builders would repeat one window and leave the cap out: refused, and so is serving
  CHECK_THROWS_WITH(models::llama(g), Catch::Contains("models::visit_gemma2"));
  CHECK_THROWS_WITH(models::llama_lora(g, l), Catch::Contains("visit_gemma2_lora"));
  auto capped_llama = models::llama2_7b(64);
  capped_llama.logit_softcap = true;
  CHECK_THROWS_WITH(models::llama(capped_llama), Catch::Contains("logit_softcap"));
  CHECK_THROWS_WITH(serve(g, serving{.context = 1024, .concurrency = 1}, devices::h100_80gb), Catch::Contains("Gemma 2, Gemma 3 or OLMo 3 with vLLM is not modelled"));
}

TEST_CASE("attn_implementation eager: every layer's scores kept, measured on PyTorch 2.6") {
  training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  // measure26_llm.py's llama2l_eager_b2_t256: width 256, 8 q / 2 kv heads, ffn 688, 256 tokens
  auto g = at_measured_sizes(models::llama2_7b(256), 2, 8, 2);
  auto eager = g;
  eager.eager_attention = true;
  const auto saved = [&](const models::llama_config& c) { return budget_totals(models::llama(c), cpu, devices::a100_80gb).saved_activations; };
  CHECK(saved(eager) == 31'864'832);
  cpu.precision = amp_bf16;  // llama2l_eager_b2_t256_bf16: the fp32 softmax output and its bf16 copy both kept
  CHECK(saved(eager) == 47'740'928);
  CHECK(saved(eager) > saved(g));
  // Gemma 2 (gemma2_5l_eager_b2_t256, fp32) with attn_logit_softcapping: tanh keeps one [2, 4, 256, 256] fp32 more a layer
  cpu.precision = fp32;
  auto gemma = at_measured_sizes(models::gemma2_2b(256), 5, 4, 2, 64);
  gemma.sliding_window = 32, gemma.eager_attention = true, gemma.attention_softcap = true;
  const auto gemma_saved = [&](const models::llama_config& c) {
    return models::visit_gemma2(c, [&](const auto& m) { return budget_totals(m, cpu, devices::a100_80gb).saved_activations; });
  };
  CHECK(gemma_saved(gemma) == 153'291'780);
  auto uncapped = gemma;
  uncapped.attention_softcap = false;
  CHECK(gemma_saved(gemma) - gemma_saved(uncapped) == 5 * 2 * 4 * 256 * 256 * 4);
  // the cap without eager: SDPA keeps no scores to cap
  auto sdpa_capped = gemma;
  sdpa_capped.eager_attention = false;
  CHECK_THROWS_WITH(gemma_saved(sdpa_capped), Catch::Contains("needs eager_attention"));
}

TEST_CASE("Granite: Llama's layers with GraniteModel's multipliers, measured on PyTorch 2.6") {
  // measure26_llm.py's granite_2l sizes: width 256, 8 q / 2 kv heads, ffn 688, tied head, batch 2, 64 tokens
  auto g = at_measured_sizes(models::granite3_2b(64), 2, 8, 2);
  training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto full = budget_totals(models::granite(g), cpu, devices::a100_80gb);
  CHECK(full.parameter_count == models::llama_parameter_count(g));
  // pytorch-2.6-cpu-llm.json granite_2l_b2_t64: 6,393,344 B saved — what the same Llama saves: a product
  // with a Python number (embedding_multiplier, residual_multiplier) or a quotient (logits_scaling) keeps nothing
  CHECK(full.saved_activations == 6'393'344);
  auto llama = g;
  llama.granite = false;
  CHECK(budget_totals(models::llama(llama), cpu, devices::a100_80gb).saved_activations == full.saved_activations);
  cpu.checkpoint_blocks = true;  // granite_2l_ckpt_b2_t64
  CHECK(budget_totals(models::granite(g), cpu, devices::a100_80gb).saved_activations == 689'664);
  cpu.checkpoint_blocks = false;
  // LoRA r=8 on all-linear (granite_2l_lora_all_r8_b2_t64: 5,531,648 B saved), PEFT's count
  const models::lora_config l{8, all_linear, 0, base_weights::same};
  const auto lora = budget_totals(models::granite_lora(g, l), cpu, devices::a100_80gb);
  CHECK(lora.trainable_count == models::lora_counts(g, l).trainable);
  CHECK(lora.saved_activations == 5'531'648);
  // the Llama builders would leave the multipliers out: refused
  CHECK_THROWS_WITH(models::llama(g), Catch::Contains("models::granite"));
  CHECK_THROWS_WITH(models::llama_lora(g, l), Catch::Contains("models::granite"));
}

TEST_CASE("A LoRA model composes like any other: its unused records stay out of the composition") {
  // lora_stack keeps room for the layer runs layers_to_transform may need; a composition around it
  // (here: a scale after the head) copies only the records its root spans
  auto g = models::qwen2_0_5b(64);
  g.layers = 4;
  models::lora_config l{8, q_proj | v_proj, 0, base_weights::same};
  l.layers_to_transform = {1, 2};
  const training plan{.batch = 1};
  const auto alone = budget_totals(models::llama_lora(g, l), plan, devices::a100_80gb);
  const auto composed = budget_totals(sequential(models::llama_lora(g, l), scale()), plan, devices::a100_80gb);
  CHECK(composed.parameter_count == alone.parameter_count);
  CHECK(composed.trainable_count == alone.trainable_count);
  CHECK(composed.saved_activations == alone.saved_activations);
}

TEST_CASE("LoRA on Qwen2 and Gemma: the simulated models hold PEFT's counts") {
  const auto narrow = [] {  // heads x head_dim != width: o_proj and q_proj adapters follow 8 x 192
    auto g = models::gemma_2b(64);
    g.head_dim = 192;
    return g;
  }();
  for (const auto& g : {models::qwen2_0_5b(64), models::qwen2_7b(64), models::gemma_2b(64), narrow}) {
    for (const std::int64_t targets : {std::int64_t{q_proj | v_proj}, std::int64_t{all_linear}}) {
      const models::lora_config l{8, targets, 0, base_weights::same};
      const auto b = budget_totals(models::llama_lora(g, l), training{.batch = 1, .precision = pure_bf16}, devices::h200);
      CHECK(b.trainable_count == models::lora_counts(g, l).trainable);
      // PEFT's "all params": the frozen base (biases, one tied table) in bf16, the norms, the adapters
      CHECK(b.parameter_count == models::lora_counts(g, l).all);
      CHECK(b.parameter_count - b.trainable_count == models::llama_parameter_count(g));
      CHECK(b.buffers == 0);
    }
  }
}

TEST_CASE("LoRA on a tied head: the table is the embedding's, the activations those of an untied head") {
  const auto tied = models::qwen2_0_5b(256);
  auto untied = tied;
  untied.tied_head = false;
  const models::lora_config qv{8, q_proj | v_proj, 0, base_weights::same};
  const training plan{.batch = 2, .precision = pure_bf16};
  const auto a = budget_totals(models::llama_lora(tied, qv), plan, devices::a100_80gb);
  const auto b = budget_totals(models::llama_lora(untied, qv), plan, devices::a100_80gb);
  CHECK(b.base_weight_bytes - a.base_weight_bytes == 2 * 151'936LL * 896);  // one bf16 vocab x width table less
  CHECK(b.parameter_count - a.parameter_count == 151'936LL * 896);
  CHECK(a.saved_activations == b.saved_activations);
}

// zoo_llm_probe.py fusedqkv (zoo_llm_probe_output-2.6.txt) and the reference case phi3_2l_b2_t64:
// without a cache SDPA's saved v, a slice of the packed qkv_proj output, keeps all of it; under
// autocast the packed projections cast their input once (qkv: not three times, gate_up: not
// twice). modeling_phi3.py's RoPE concatenates (q and k laid out [B, H, T, d]): the flash output's
// copy for o_proj. transformers 5 with the config's use_cache (hf_phi3_b2_t64 of
// pytorch-2.6-cpu-transformers.json): DynamicCache's torch.cat copies v, which SDPA keeps instead.
TEST_CASE("Phi-3's packed projections: the saved v keeps the whole qkv output unless the cache copies it; one autocast cast") {
  auto fused = models::phi3_mini(64);
  fused.use_cache = false;
  auto separate = fused;
  separate.fused_projections = false;
  const std::int64_t rows = 64, width = 3072, kv = 3072, layers = 32;
  const auto saved = [](const auto& m, precision_mode p) {
    return budget_totals(m, training{.batch = 1, .precision = p, .runtime = runtime_kind::torch2_6_cpu}, devices::a100_80gb).saved_activations;
  };
  CHECK(saved(models::phi3(fused), fp32) - saved(models::llama(separate), fp32) == layers * rows * (width + kv + width) * 4);
  // bf16: + the whole bf16 projection and the output's copy, - two of the input's three bf16 copies (q/k/v), - one of two (gate/up)
  CHECK(saved(models::phi3(fused), amp_bf16) - saved(models::llama(separate), amp_bf16) == layers * rows * ((width + kv + width) * 2 - 3 * width * 2));
  auto cached = fused;
  cached.use_cache = true;  // phi3_mini()'s own: the published config's use_cache
  CHECK(models::phi3_mini(64).use_cache);
  CHECK(saved(models::phi3(fused), fp32) - saved(models::phi3(cached), fp32) == layers * rows * (width + 2 * kv - kv) * 4);
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

// benchmarks/accuracy/t5_probe.py under PyTorch 2.6 CPU (t5_probe_output-2.6.txt): small T5s
// (transformers' modeling_t5 op for op), batch 2, fp32 and bf16 autocast: parameters and saved
// bytes exact. What it took: the bucket lookup's [L, L] int64 indices, separate q, k, v casts
// under autocast and softmax(scores.float()) (attention_impl::t5), wo's input cast
// (to_parameter_type, visible without dropout).
TEST_CASE("T5: saved bytes against PyTorch 2.6 CPU") {
  struct row { models::t5_config t; std::int64_t params, saved_fp32, saved_bf16; };
  const row rows[] = {
      {{1000, 64, 16, 128, 2, 2, 4, 32, 10, 32, 16}, 228'864, 1'528'704, 1'521'536},
      {{1000, 64, 16, 128, 2, 2, 8, 32, 10, 32, 16}, 327'424, 2'167'680, 2'094'976},  // 8 heads x d_kv 16 = 128 != d_model 64
      {{2000, 128, 32, 512, 3, 3, 4, 32, 10, 64, 64}, 1'634'688, 15'280'640, 13'335'040},
      {{1000, 64, 16, 128, 2, 2, 4, 32, 0, 32, 16}, 228'864, 938'880, 1'308'544},  // dropout 0
  };
  for (const auto& r : rows) {
    const training fp32_step{.batch = 2, .precision = fp32, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
    const auto b = budget_totals(models::t5(r.t), fp32_step, devices::a100_80gb);
    CHECK(b.parameter_count == r.params);
    CHECK(b.saved_activations == r.saved_fp32);
    auto amp_step = fp32_step;
    amp_step.precision = amp_bf16;
    CHECK(budget_totals(models::t5(r.t), amp_step, devices::a100_80gb).saved_activations == r.saved_bf16);
  }
}

// transformers >= 5.13's T5 through SDPA (op_rules.md L37, read off the H200 trace of t5-small b16 x 512 under
// AMP bf16): the self-attentions' masks are the position bias's strided view, so CUDA runs the math path; the
// decoder's k and v are copied by the EncoderDecoderCache and held by the output until the loop drops it.
TEST_CASE("T5 through SDPA: the decoder's cache copies, held by the output (op_rules.md L37)") {
  auto t = models::t5_small(64);
  t.sdpa = true;
  auto uncached = t;
  uncached.use_cache = false;
  training step{.batch = 2, .precision = amp_bf16};
  step.output_held = true;
  const auto cached_b = budget_totals(models::t5(t), step, devices::h100_80gb);
  const auto uncached_b = budget_totals(models::t5(uncached), step, devices::h100_80gb);
  // the self-attention's bf16 k and v: copies the output holds (the math path keeps its own fp32 ones); the
  // cross-attention's copies are what cuDNN keeps in place of the projections' outputs (the same bytes)
  const std::int64_t copies = t.decoder_layers * 2 * (2 * 64 * t.heads * t.head_width * 2);
  CHECK(cached_b.after_forward - uncached_b.after_forward == copies);
  CHECK(cached_b.saved_activations == uncached_b.saved_activations);
}

TEST_CASE("T5 through SDPA on CUDA: every self-attention takes the math path (op_rules.md L37)") {
  auto eager = models::t5_small(256);
  eager.dropout_percent = 0;  // no dropout: the 2.6 CPU's flash kernel takes the strided mask (no stride rule there)
  eager.layers = eager.decoder_layers = 2;
  auto sdpa = eager;
  sdpa.sdpa = true;
  const training cuda{.batch = 2};
  const training cpu{.batch = 2, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
  const auto saved = [&](const models::t5_config& t, const training& p) { return budget_totals(models::t5(t), p, devices::h100_80gb).saved_activations; };
  // what CUDA and the CPU differ in outside the attention, taken out with the eager twin's difference
  const auto attention_delta = (saved(sdpa, cuda) - saved(sdpa, cpu)) - (saved(eager, cuda) - saved(eager, cpu));
  // fp32, B 2, L 256, 8 heads of 64, per self-attention: CUDA's math path keeps q·√s's and kᵀ·√s's reshape copies
  // and v's copy (3 X) and the probabilities P, and the o Linear the transpose's copy of the output (X); the CPU's
  // flash kernel keeps q, k, v (3 X), its output, which the o Linear reads as it is (X), the log-sum-exp and its
  // mask: the encoder's shared bias once, each decoder layer's where(). Cross-attention: the same on both.
  const std::int64_t B = 2, H = 8, L = 256, P = B * H * L * L * 4, lse = B * H * L * 4, mask = H * L * L * 4;
  CHECK(attention_delta == 4 * (P - lse) - 3 * mask);
}

// The masks T5's SDPA reads are the same for every sample (sim::make_batch_free): the batch search's lines
// (max_micro_batch, check.hpp estimate_micro_batch) then see only bytes that grow with the micro-batch grow,
// and traced at 7 every line's per-sample part divides evenly (a [1, H, Lq, Lk] mask counted per sample would not).
TEST_CASE("T5 through SDPA: its masks do not grow with the micro-batch") {
  auto t = models::t5_small(256);
  t.layers = t.decoder_layers = 2;
  t.sdpa = true;
  for (const auto precision : {fp32, amp_bf16}) {
    const auto e = detail::estimate_micro_batch(models::t5(t), training{.batch = 7, .precision = precision}, devices::h100_80gb, 7, 100);
    CHECK(e.exact);
  }
}

TEST_CASE("T5 through SDPA: a padded batch is a named error, eager takes it (op_rules.md L35, L37)") {
  auto t = models::t5_small(64);
  t.padded_batch = true;
  CHECK_NOTHROW(budget_totals(models::t5(t), training{.batch = 2}, devices::h100_80gb));
  t.sdpa = true;
  CHECK_THROWS_WITH(budget_totals(models::t5(t), training{.batch = 2}, devices::h100_80gb),
                    Catch::Contains("a padded batch through T5's SDPA attention (transformers >= 5.13) is not modelled"));
}

TEST_CASE("T5 under a checkpointed decoder: the encoder output stays for the re-run") {
  auto t = models::t5_small(64);
  const auto plain = budget_totals(models::t5(t), training{.batch = 2}, devices::a100_80gb);
  const auto ckpt = budget_totals(models::t5(t), training{.batch = 2, .checkpoint_blocks = true}, devices::a100_80gb);
  CHECK(ckpt.parameter_count == plain.parameter_count);
  CHECK(ckpt.saved_activations < plain.saved_activations);
  // checkpoint_all: the encoder-decoder is one top-level block, re-run whole in backward
  const auto whole = budget_totals(models::t5(t), training{.batch = 2, .checkpoint_all = true}, devices::a100_80gb);
  CHECK(whole.saved_activations < ckpt.saved_activations);
}
