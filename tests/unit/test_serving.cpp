// Serving (issue D): KV bytes per token pinned, paged blocks, sliding windows, the capacity
// solvers, and the bad inputs that are errors (serving.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/serving.hpp>

using namespace gpubudget;

// 2 · layers · kv_heads · head_dim · bytes: Llama-3-8B bf16 2·32·8·128·2, Llama-2-7B fp16 2·32·32·128·2
static_assert(kv_bytes_per_token(models::llama3_8b(), dtype::bf16) == 131'072);
static_assert(kv_bytes_per_token(models::llama2_7b(), dtype::fp16) == 524'288);
static_assert(kv_bytes_per_token(models::llama3_8b(), dtype::fp8) == 65'536);
static_assert(kv_bytes_per_token(models::mistral_7b(), dtype::bf16) == 131'072);

// The whole serving budget is a constant expression: Llama-3-8B in bf16 on an L4.
constexpr auto l4_8k = serve(models::llama3_8b(), serving{.context = 8192, .concurrency = 2}, devices::l4);
static_assert(l4_8k.fits());
static_assert(require_serves<l4_8k>);
static_assert(l4_8k.weights == 2 * 8'030'261'248);
static_assert(l4_8k.kv_cache_bytes == std::int64_t{2} * 8192 * 131'072);

TEST_CASE("serving budget: fixed part, KV cache, solvers") {
  const auto& b = l4_8k;
  CHECK(b.usable == devices::l4.capacity * 9 / 10);
  CHECK(b.parameter_count == 8'030'261'248);
  CHECK(b.workspace > 0);
  CHECK(b.kv_available == b.usable - b.weights - b.workspace - b.cuda_context - b.cublas_workspace);
  // whole 16-token blocks
  CHECK(b.max_concurrent_tokens % 16 == 0);
  CHECK(b.max_concurrent_tokens == b.kv_available / (16 * 131'072) * 16);
  CHECK(b.max_sequences == b.max_concurrent_tokens / 8192);
  CHECK(b.max_context == 8192);  // memory allows more than the model's positions
  // one more sequence than fits does not fit, by the KV of that sequence
  const auto over = serve(models::llama3_8b(), serving{.context = 8192, .concurrency = b.max_sequences + 1}, devices::l4);
  CHECK_FALSE(over.fits());
  const auto at = serve(models::llama3_8b(), serving{.context = 8192, .concurrency = b.max_sequences}, devices::l4);
  CHECK(at.fits());
  // fp8 KV doubles the tokens
  const auto fp8 = serve(models::llama3_8b(), serving{.context = 8192, .concurrency = 2, .kv = dtype::fp8}, devices::l4);
  CHECK(fp8.kv_available == b.kv_available);
  CHECK((fp8.max_concurrent_tokens - 2 * b.max_concurrent_tokens == 0 || fp8.max_concurrent_tokens - 2 * b.max_concurrent_tokens == 16));
}

TEST_CASE("paged blocks and sliding windows") {
  // 100 tokens take 7 blocks of 16
  const auto b = serve(models::llama2_7b(), serving{.context = 100, .precision = pure_fp16, .kv = dtype::fp16}, devices::a100_80gb);
  CHECK(b.kv_tokens_per_sequence == 112);
  CHECK(b.kv_cache_bytes == 112 * 524'288);
  // Mistral: a 16k sequence keeps only the 4096-token window
  const auto m = serve(models::mistral_7b(), serving{.context = 16384, .prefill_chunk = 2048}, devices::a100_80gb);
  CHECK(m.kv_tokens_per_sequence == 4096);
  CHECK(m.kv_cache_bytes == 4096 * 131'072);
  CHECK(m.max_context == 32768);  // the window fits, so positions bound a single sequence
  // chunked prefill: a smaller activation peak
  const auto whole = serve(models::mistral_7b(), serving{.context = 8192}, devices::a100_80gb);
  const auto chunked = serve(models::mistral_7b(), serving{.context = 8192, .prefill_chunk = 1024}, devices::a100_80gb);
  CHECK(chunked.workspace < whole.workspace);
  // vLLM's kernels take the window themselves: no transformers mask in its prefill (op_rules.md L18)
  auto unwindowed = models::mistral_7b();
  unwindowed.sliding_window = 0;
  CHECK(serve(unwindowed, serving{.context = 8192}, devices::a100_80gb).workspace == whole.workspace);
  // transformers' generate() does build it once the prompt reaches the window: a larger prefill
  const serving hf{.context = 8192, .concurrency = 1, .engine = serving_engine::hf, .generated = 128};
  CHECK(serve(models::mistral_7b(), hf, devices::a100_80gb).workspace > serve(unwindowed, hf, devices::a100_80gb).workspace);
  // Llama-2-7B fp16 on an L4 at 68 % utilization: memory, not positions, bounds the context
  const auto l = serve(models::llama2_7b(), serving{.context = 1024, .precision = pure_fp16, .kv = dtype::fp16, .utilization_percent = 68},
                       devices::l4);
  CHECK(l.max_context < 4096);
  CHECK(l.max_context == l.max_concurrent_tokens);
}

TEST_CASE("bad serving input is an error") {
  CHECK_THROWS(serve(models::llama2_7b(), serving{.context = 8192}, devices::a100_80gb));  // beyond 4096 positions
  CHECK_NOTHROW(serve(models::llama2_7b(), serving{.context = 8192, .beyond_positions = true}, devices::a100_80gb));
  CHECK_THROWS(serve(models::llama2_7b(), serving{.context = 0}, devices::a100_80gb));
  CHECK_THROWS(serve(models::llama2_7b(), serving{.context = 512, .concurrency = 0}, devices::a100_80gb));
  CHECK_THROWS(serve(models::llama2_7b(), serving{.context = 512, .kv = dtype::int8}, devices::a100_80gb));
  CHECK_THROWS(serve(models::llama2_7b(), serving{.context = 512, .utilization_percent = 101}, devices::a100_80gb));
  auto g = models::mistral_7b();
  g.sliding_window = 65536;  // larger than its 32768 positions
  CHECK_THROWS(serve(g, serving{.context = 512}, devices::a100_80gb));
}

// Mixtral-8x7B (issue D): every expert counts, two of eight run per token.
static_assert(models::mixtral_parameter_counts(models::mixtral_8x7b(), {}).total == 46'702'792'704);
static_assert(models::mixtral_parameter_counts(models::mixtral_8x7b(), {}).active == 12'879'925'248);

TEST_CASE("Mixtral-8x7B: simulated parameters, routed activations") {
  const auto g = models::mixtral_8x7b(256);
  const training plan{.batch = 1, .precision = pure_bf16};
  const auto b = budget_totals(models::mixtral(g, {}), plan, devices::h200);
  CHECK(b.parameter_count == 46'702'792'704);
  CHECK(b.trainable_count == 46'702'792'704);
  // 4.x's expert modules: tokens follow the routing, a capacity factor of 200 % budgets twice the
  // tokens per expert; transformers 5's grouped experts run every (token, expert) pair at once
  const auto loop = budget_totals(models::mixtral(g, {8, 2, 100, moe_impl::expert_modules}), plan, devices::h200);
  const auto loop2 = budget_totals(models::mixtral(g, {8, 2, 200, moe_impl::expert_modules}), plan, devices::h200);
  CHECK(loop2.saved_activations > loop.saved_activations);
  CHECK(budget_totals(models::mixtral(g, {8, 2, 200}), plan, devices::h200).saved_activations == b.saved_activations);
  // top-1 routing saves less than top-2
  const auto b1 = budget_totals(models::mixtral(g, {8, 1, 100}), plan, devices::h200);
  CHECK(b1.saved_activations < b.saved_activations);
  CHECK_THROWS(models::mixtral(g, {8, 9, 100}));
  CHECK_THROWS(budget_totals(models::mixtral(g, {8, 9, 100}), plan, devices::h200));
}

// benchmarks/accuracy/moe_probe.py under PyTorch 2.6 CPU (moe_probe_output-2.6.txt): one
// MixtralSparseMoeBlock, width 64, ffn 128, 4 experts, batch 2 x 32 tokens.
TEST_CASE("MoE block: saved bytes against PyTorch 2.6 CPU") {
  struct row { std::int64_t top_k; bool amp; std::int64_t measured; };
  constexpr row rows[] = {{1, false, 199936}, {1, true, 183552}, {2, false, 382208}, {2, true, 292096}};
  for (const auto& r : rows) {
    const training plan{.batch = 2, .precision = r.amp ? amp_bf16 : fp32, .runtime = runtime_kind::torch2_6_cpu, .backend = backend_kind::cpu};
    const auto b = budget_totals(sequential(input(32, 64), moe(4, r.top_k, 128)), plan, devices::a100_80gb);
    INFO("top_k " << r.top_k << " amp " << r.amp << " saved " << b.saved_activations << " measured " << r.measured);
    CHECK(b.parameter_count == 64 * 4 + 4 * 3 * 64 * 128);
    CHECK(b.saved_activations == r.measured);
  }
}

TEST_CASE("serving Mixtral-8x7B: every expert loaded") {
  const auto m = serve(models::mixtral_8x7b(), models::moe_config{}, serving{.context = 4096, .concurrency = 8}, devices::h200);
  CHECK(m.parameter_count == 46'702'792'704);
  CHECK(m.weights == 2 * 46'702'792'704);
  CHECK(m.kv_bytes_per_token == 131'072);
  CHECK(m.fits());
  CHECK_FALSE(serve(models::mixtral_8x7b(), models::moe_config{}, serving{.context = 4096}, devices::a100_80gb).fits());
}

// Quantized serving (serving::weights): the decoder layers' linears in bitsandbytes' layout
// (quantized_weight_bytes, the QLoRA op), embedding and LM head in 16 bit, KV cache unchanged.
TEST_CASE("quantized serving: weights, dequantized temporaries, KV cache unchanged") {
  constexpr auto g = models::llama3_8b();
  constexpr auto dense = serve(g, serving{.context = 4096, .concurrency = 8}, devices::l4);
  constexpr auto nf4 = serve(g, serving{.context = 4096, .concurrency = 8, .weights = base_weights::nf4}, devices::l4);
  static_assert(nf4.parameter_count == dense.parameter_count);
  static_assert(nf4.kv_bytes_per_token == dense.kv_bytes_per_token && nf4.kv_cache_bytes == dense.kv_cache_bytes);
  // per layer q, o 4096², k, v 1024 x 4096, gate, up, down 14336 x 4096 in NF4; embedding and head
  // 128256 x 4096 bf16; 65 norms of 4096 bf16
  constexpr std::int64_t D = 4096, kv = 1024, F = 14336, V = 128256;
  constexpr std::int64_t per_layer = 2 * quantized_weight_bytes(D * D, D, base_weights::nf4) + 2 * quantized_weight_bytes(D * kv, kv, base_weights::nf4) +
                                     3 * quantized_weight_bytes(D * F, F, base_weights::nf4);
  static_assert(nf4.weights == 32 * per_layer + 2 * V * D * 2 + 65 * D * 2);
  static_assert(nf4.max_sequences > 3 * dense.max_sequences);
  // int8: the input's int8 copy and the int32 product are prefill temporaries
  constexpr auto int8 = serve(g, serving{.context = 4096, .concurrency = 8, .weights = base_weights::int8}, devices::a100_80gb);
  static_assert(int8.workspace > serve(g, serving{.context = 4096, .concurrency = 8}, devices::a100_80gb).workspace);
  // a 4-bit weight is dequantized for its matmul: at a short prefill the largest (14336 x 4096,
  // 112 MiB in bf16) is the peak's largest term
  constexpr auto short_nf4 = serve(g, serving{.context = 16, .weights = base_weights::nf4}, devices::l4);
  constexpr auto short_dense = serve(g, serving{.context = 16}, devices::l4);
  static_assert(short_nf4.workspace >= short_dense.workspace + F * D * 2 / 2);
  CHECK_THROWS(serve(g, serving{.context = 512, .weights = base_weights::fp16}, devices::l4));
  CHECK_THROWS(serve(models::mixtral_8x7b(), models::moe_config{}, serving{.context = 512, .weights = base_weights::nf4}, devices::h200));
}

// LoRA on Mixtral-8x7B (models::mixtral_lora): adapters on the attention projections, every
// expert frozen in the precision's type; PEFT's count adds the adapters to all 46.7 B.
TEST_CASE("Mixtral-8x7B LoRA: adapters on attention, experts frozen") {
  const auto g = models::mixtral_8x7b(256);
  const models::lora_config l{16, q_proj | v_proj, 0, base_weights::same};
  // per layer: q 16·(4096 + 4096), v 16·(4096 + 1024)
  CHECK(models::mixtral_lora_counts(g, {}, l).trainable == 32 * 16 * (8192 + 5120));
  CHECK(models::mixtral_lora_counts(g, {}, l).all == 46'702'792'704 + 6'815'744);
  const auto b = budget_totals(models::mixtral_lora(g, {}, l), training{.batch = 1, .precision = pure_bf16, .optimizer = adamw8bit}, devices::h200);
  CHECK(b.trainable_count == 6'815'744);
  // the experts (frozen parameters) and the attention base (buffers) in bf16
  CHECK(b.parameters + b.buffers == 2 * (46'702'792'704 + 6'815'744));
  CHECK_THROWS(models::mixtral_lora(g, {}, {16, gate_proj, 0, base_weights::same}));
  CHECK_THROWS(models::mixtral_lora(g, {}, {16, q_proj, 0, base_weights::nf4}));
}

// transformers' generate() (serving_engine::hf): the cache unpaged at context - 1 tokens, the
// prompts prefilled together, the whole capacity usable; measured on the H100 (TinyLlama,
// Qwen2-7B) by accuracy.reference_cuda_real_libraries.
constexpr serving hf_generate{.context = 1152, .concurrency = 8, .engine = serving_engine::hf, .generated = 128};
constexpr auto l4_generate = serve(models::llama3_8b(), hf_generate, devices::l4);
static_assert(l4_generate.kv_tokens_per_sequence == 1151);
static_assert(l4_generate.usable == devices::l4.capacity);

TEST_CASE("hf engine: generate()'s prefill of every prompt, its DynamicCache, the sequences that fit") {
  const auto& b = l4_generate;
  CHECK(b.kv_cache_bytes == std::int64_t{8} * 1151 * 131'072);
  // the prefill of 8 x 1024 tokens at once is above one vLLM prefill of 1152 tokens
  const auto vllm = serve(models::llama3_8b(), serving{.context = 1152, .concurrency = 8}, devices::l4);
  CHECK(b.workspace > vllm.workspace);
  // every term is linear in the sequences: max_sequences fits, one more does not
  REQUIRE(b.max_sequences > 8);
  serving more = hf_generate;
  more.concurrency = b.max_sequences;
  CHECK(serve(models::llama3_8b(), more, devices::l4).fits());
  more.concurrency = b.max_sequences + 1;
  CHECK_FALSE(serve(models::llama3_8b(), more, devices::l4).fits());
  // a longer generation with the same context holds a smaller prefill
  serving longer = hf_generate;
  longer.generated = 1024;
  CHECK(serve(models::llama3_8b(), longer, devices::l4).workspace < b.workspace);
}

TEST_CASE("hf engine: generated tokens must leave a prompt") {
  serving none = hf_generate;
  none.generated = none.context;
  CHECK_THROWS_WITH(serve(models::llama3_8b(), none, devices::l4), Catch::Contains("generated tokens must be 0 or more and fewer than the context"));
}

// transformers 5's DynamicCache in generate() on models with a sliding window (op_rules.md L31,
// pytorch-2.6-cpu-transformers.json hf_*_gen_b2_p512_n8, generate_peak_bytes within 0.11 %):
// a window layer (DynamicSlidingWindowLayer) keeps a window after decoding, but after the prefill
// it holds a view of the whole prompt's copy until its first decode step.
TEST_CASE("hf engine: sliding-window layers hold the prompt after the prefill, a window after decoding") {
  serving gen{.context = 16384, .concurrency = 2, .engine = serving_engine::hf, .generated = 256};
  const auto mistral = models::mistral_7b();  // every layer within 4096 tokens
  const auto b = serve(mistral, gen, devices::h200);
  const auto per_token = kv_bytes_per_token(mistral, gen.kv);
  CHECK(b.kv_cache_bytes == 2 * 4096 * per_token);
  // the prefill's peak holds every layer's copy of the 16,128-token prompts
  CHECK(b.workspace + b.kv_cache_bytes > 2 * std::int64_t{16128} * per_token);
  // Gemma 3 (gemma3_1b: 26 layers, 22 within 512 tokens): 4 layers keep every token, 22 a window
  const auto g3 = models::gemma3_1b();
  CHECK(models::sliding_window_layers(g3) == 22);
  gen.context = 8192, gen.generated = 512;
  const auto layer_token = kv_bytes_per_token(g3, gen.kv) / g3.layers;
  CHECK(serve(g3, gen, devices::l4).kv_cache_bytes == 2 * layer_token * (4 * 8191 + 22 * 512));
  // Gemma 2 a window on every other layer, OLMo 3 on three of four
  CHECK(models::sliding_window_layers(models::gemma2_2b()) == 13);
  CHECK(models::sliding_window_layers(models::olmo3_7b()) == 24);
  CHECK(models::sliding_window_layers(models::llama3_8b()) == 0);
  // vLLM's manager of alternating windows is not modelled: an error, not a number
  CHECK_THROWS_WITH(serve(g3, serving{.context = 8192}, devices::l4), Catch::Contains("with vLLM is not modelled"));
}

// generate() on prompts of unequal lengths, left-padded (op_rules.md L32, pytorch-2.6-cpu-transformers.json
// hf_llama_gen_gqa_*_padded within 2 %): a one-token query keeps its mask too (_ignore_causal_mask_sdpa needs
// padding_mask.all()), so each decode step's attention repeats a layer's grouped-query keys and values to every head.
TEST_CASE("hf engine: a padded batch's decode steps repeat grouped-query K and V to every head") {
  const serving gen{.context = 8192, .concurrency = 8, .engine = serving_engine::hf, .generated = 7680};
  auto g = models::llama3_8b();  // 32 heads, 8 kv heads
  const auto plain = serve(g, gen, devices::h200);
  g.padded_batch = true;
  const auto padded = serve(g, gen, devices::h200);
  CHECK(padded.kv_cache_bytes == plain.kv_cache_bytes);
  // the last step: CUDA's kernels read the grouped heads unpadded (the concatenation's old K, half a layer, beside the
  // cache); padded, repeat_kv's K and V of 4 times a layer's 8 x 8191 tokens
  const auto layer = kv_bytes_per_token(g, gen.kv) / g.layers * 8 * 8191;
  CHECK(padded.workspace - plain.workspace == 4 * layer - layer / 2);
  // as many kv heads as heads: nothing to repeat
  auto mha = models::llama2_7b();
  const auto mha_plain = serve(mha, serving{.context = 4096, .concurrency = 8, .engine = serving_engine::hf, .generated = 3584}, devices::h200);
  mha.padded_batch = true;
  CHECK(serve(mha, serving{.context = 4096, .concurrency = 8, .engine = serving_engine::hf, .generated = 3584}, devices::h200).workspace == mha_plain.workspace);
  // vLLM schedules unpadded sequences: an error, not a number
  CHECK_THROWS_WITH(serve(g, serving{.context = 8192}, devices::h200), Catch::Contains("vLLM schedules unpadded sequences"));
}

// generate() through the caching allocator model (serving::model_allocator; op_rules.md A22): the
// prefill's forward replayed, then every decode step's DynamicCache concatenations. Measured on the
// H100 by accuracy.reference_cuda_real_libraries (TinyLlama 16 x (512 + 128): reserved -0.28 %).
TEST_CASE("hf engine: the caching allocator model's reserve") {
  const auto g = models::qwen2_0_5b();  // 24 layers, 2 kv heads of 64
  serving gen{.context = 128, .concurrency = 8, .engine = serving_engine::hf, .generated = 64};
  const auto flat = serve(g, gen, devices::h100_80gb);
  CHECK(flat.reserved_peak == 0);
  CHECK(flat.allocator_reserve == 0);
  gen.model_allocator = true;
  const auto b = serve(g, gen, devices::h100_80gb);
  // the same tensors; the allocator holds at least them at its peak, and the device total adds the rest
  CHECK(b.workspace == flat.workspace);
  CHECK(b.reserved_peak >= b.weights + b.workspace + b.kv_cache_bytes + b.cublas_workspace);
  CHECK(b.allocator_reserve == b.reserved_peak - (b.weights + b.workspace + b.kv_cache_bytes + b.cublas_workspace));
  CHECK(b.total() == flat.total() + b.allocator_reserve);
  // a generate() process loads no backward kernels: the H100's measured inference context; the H200's is not measured
  CHECK(b.cuda_context == devices::h100_80gb.inference_context);
  CHECK(devices::h100_80gb.inference_context < devices::h100_80gb.context);
  CHECK(serve(g, gen, devices::h200).cuda_context == devices::h200.context);

  // after a short prompt, each decode step's grown K and V leave the old blocks behind: a long
  // generation reserves more above its tensors than the same prompt's short one
  gen.context = 2048, gen.generated = 1984;
  const auto decode_bound = serve(g, gen, devices::h100_80gb);
  CHECK(decode_bound.allocator_reserve > b.allocator_reserve);
  // PYTORCH_CUDA_ALLOC_CONF reaches the replay: expandable segments map what the cache grows into
  gen.allocator = alloc_conf("expandable_segments:True");
  CHECK(serve(g, gen, devices::h100_80gb).allocator_reserve < decode_bound.allocator_reserve);

  // a padded batch repeats each layer's grown K and V to every head at every step (L32): more requests that grow
  gen.allocator = {};
  auto padded = g;
  padded.padded_batch = true;
  CHECK(serve(padded, gen, devices::h100_80gb).reserved_peak > decode_bound.reserved_peak);

  // near a device's limit (60 x 16 MiB K and V a layer at the end, past 10 MiB): uncapped the cache
  // would outgrow a 4 GiB device; under its limit PyTorch frees the cache and retries, so the run
  // reserves the limit and fits
  const auto small = custom_device("4 GiB", 4 * GiB);
  gen.concurrency = 60;
  const auto capped = serve(g, gen, small);
  CHECK(capped.allocator_capped);
  CHECK_FALSE(capped.allocator_out_of_memory);
  CHECK(capped.fits());
  CHECK(capped.total() == small.capacity);
  // max_sequences is the most the capped allocator runs: that many fit, one more does not
  REQUIRE(capped.max_sequences > 60);
  gen.concurrency = capped.max_sequences;
  CHECK(serve(g, gen, small).fits());
  gen.concurrency = capped.max_sequences + 1;
  const auto over = serve(g, gen, small);
  CHECK_FALSE(over.fits());
  CHECK(over.allocator_out_of_memory);
}
