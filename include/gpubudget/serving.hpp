// gpubudget/serving.hpp — serving a Llama-style decoder: KV cache, prefill peak and capacity solvers.
//
//   constexpr auto s = serve(models::llama3_8b(), serving{.context = 8192, .concurrency = 4}, devices::l4);
//   static_assert(s.fits());                       // plain bool
//   static_assert(require_serves<s>);              // on failure: needed / usable MiB in the diagnostic
//   static_assert(s.max_sequences >= 4);
//
// The model (vLLM's memory profile, vllm/worker/worker.py determine_num_available_blocks:
// available KV memory = total GPU memory · gpu_memory_utilization − the profile run's peak, which
// holds the weights, the largest prefill's activations and the non-torch allocations):
//  * usable        = capacity · utilization (vLLM's --gpu-memory-utilization, default 0.9:
//                    vllm/engine/arg_utils.py `gpu_memory_utilization: float = 0.90`, docs.vllm.ai
//                    "Engine Arguments");
//  * weights       = parameters in the serving precision;
//  * workspace     = the inference budget's forward peak of the model at the prefill length (the
//                    whole prompt, or one chunk with chunked prefill; `prefill_sequences` of them
//                    at once) — gpubudget's own simulation — or, if larger, the body's output
//                    with the LM head's logits of the last positions;
//  * CUDA context and cuBLAS workspace from the device;
//  * KV cache      = per token 2 (K and V) · layers · kv_heads · head_dim · dtype bytes, in whole
//                    blocks of `block_size` tokens (vLLM's PagedAttention, --block-size default 16:
//                    vllm/config.py CacheConfig), a sequence holding min(context, sliding window)
//                    tokens (Mistral's rolling buffer cache: only the window is kept).
//
// `serving_engine::hf` is transformers' `generate()` instead (generation/utils.py, transformers
// 5.x), one process, one batch of `concurrency` prompts of `context - generated` tokens:
//  * usable        = the whole capacity (no memory fraction);
//  * the prompts are prefilled together: the body's forward peak at batch `concurrency` while
//    the DynamicCache fills (cache_utils.py DynamicLayer.update: `torch.cat([keys, key_states])`,
//    a copy of every layer's K and V, which SDPA then reads), with the attention_mask generate()
//    passes and the position_ids it derives from it ([B, T, d] RoPE tables, per-sample window
//    masks); the LM head on the last position only (generate passes `logits_to_keep=1`), its
//    16-bit logits and the fp32 copy generate takes of them
//    (`outputs.logits[:, -1, :].to(copy=True, dtype=torch.float32)`);
//  * the cache ends at context - 1 tokens per sequence (the last token is sampled, never fed
//    back), unpaged; each decode step's `torch.cat` holds one layer's old K (then V) next to the
//    grown one; a sliding-window layer (DynamicSlidingWindowLayer: every layer of Mistral, the
//    window layers of Gemma 2, Gemma 3 and OLMo 3) ends at its window, but holds the whole
//    prompt's copy from the prefill to its first decode step (dynamic_cache_of);
//  * the CUDA context (device::inference_context where measured: a generate() process loads no
//    backward or optimizer kernels) and one cuBLAS workspace (no autograd thread);
//  * with serving::model_allocator (CUDA): the caching allocator model's replay of the prefill and
//    every decode step (op_rules.md A22), whose reserved peak above the tensors is allocator_reserve.
// Every term is linear in the number of sequences, so max_sequences is (usable − weights −
// context − cuBLAS) / the bytes per sequence; max_context scales the same bytes per token. With
// the allocator model, max_sequences is then held to it (allocator_max_sequences: the most the
// capped allocator runs, at most the line's); max_context is the line's.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include <gpubudget/budget.hpp>
#include <gpubudget/check.hpp>
#include <gpubudget/devices.hpp>
#include <gpubudget/models/transformers.hpp>
#include <gpubudget/report.hpp>

namespace gpubudget {

namespace detail {
[[noreturn]] inline void context_beyond_the_models_positions() {
  fail("gpubudget: context beyond the model's max_position_embeddings (set beyond_positions to override)");
}
[[noreturn]] inline void sliding_window_larger_than_the_context() {
  fail("gpubudget: sliding window larger than the model's context (max_position_embeddings)");
}
[[noreturn]] inline void kv_cache_dtype_must_be_fp8_fp16_bf16_or_fp32() { fail("gpubudget: KV cache dtype must be fp8, fp16, bf16 or fp32"); }
[[noreturn]] inline void serving_weights_must_be_same_or_quantized() {
  fail("gpubudget: serving weights: same (the precision's) or a bitsandbytes quantization (nf4, nf4_dq, fp4, fp4_dq, int8)");
}
[[noreturn]] inline void quantized_experts_are_not_modelled() {
  fail("gpubudget: quantized serving of a mixture of experts is not modelled (serving::weights must be same)");
}
[[noreturn]] inline void generated_tokens_must_leave_a_prompt() {
  fail("gpubudget: serving: generated tokens must be 0 or more and fewer than the context (prompt = context - generated)");
}
[[noreturn]] inline void padded_batch_needs_the_hf_engine() {
  fail("gpubudget: serving a padded batch (llama_config::padded_batch) is transformers' generate() (serving_engine::hf); "
       "vLLM schedules unpadded sequences");
}
[[noreturn]] inline void invalid_serving_setting() {
  fail("gpubudget: serving settings: context, concurrency, block size, prefill sequences must be positive, utilization 1..100 percent");
}
}  // namespace detail

/// Who serves: vLLM's server (paged KV cache, gpu_memory_utilization) or transformers'
/// `generate()` with its DynamicCache (see the file comment).
enum class serving_engine : std::uint8_t { vllm, hf };

/// How a model is served.
struct serving {
  std::int64_t context = 4096;               ///< tokens per sequence (prompt + generated)
  std::int64_t concurrency = 1;              ///< sequences served at once
  precision_mode precision = pure_bf16;      ///< weights and compute: pure_bf16, pure_fp16 or fp32
  dtype kv = dtype::bf16;                    ///< KV cache storage: fp8, fp16, bf16 (or fp32)
  std::int64_t block_size = 16;              ///< paged KV blocks of this many tokens (vLLM default 16)
  std::int64_t utilization_percent = 90;     ///< vLLM gpu_memory_utilization (default 0.9)
  std::int64_t prefill_chunk = 0;            ///< tokens per prefill step (chunked prefill); 0: the whole context
  bool beyond_positions = false;             ///< allow a context beyond max_position_embeddings (RoPE scaling)
  std::int64_t prefill_sequences = 1;        ///< sequences prefilled together (the prefill's batch)
  /// The decoder layers' linear weights quantized with bitsandbytes (nf4, nf4_dq, fp4, fp4_dq,
  /// int8: layers/adapters.hpp quantized_weight_bytes); `same`: in the serving precision.
  /// Embedding, norms and the LM head stay in the precision's 16-bit type.
  base_weights weights = base_weights::same;
  /// The runtime whose op rules the prefill follows (the CPU ones hold it against
  /// reference/pytorch-2.6-cpu-llm.json's decode cases).
  runtime_kind runtime = runtime_kind::torch2_cuda;
  /// A CPU runtime's ISA (training::cpu_capability): which 16-bit GEMMs copy their operand.
  cpu_isa cpu_capability = cpu_isa::avx512;
  serving_engine engine = serving_engine::vllm;
  /// hf: new tokens per sequence; the prompt is the other context - generated tokens (0: a
  /// prefill only). vLLM's budget does not depend on it.
  std::int64_t generated = 0;
  /// hf on CUDA: generate() run through the caching allocator model (the prefill's storages,
  /// then every decode step's concatenations: detail::decode_stream), whose reserved peak above
  /// the tensors is the budget's allocator reserve. Off by default: a decode step per generated
  /// token is run-time work (the command line turns it on).
  bool model_allocator = false;
  allocator_settings allocator{};  ///< with model_allocator: PYTORCH_CUDA_ALLOC_CONF's settings
};

/// The memory of serving: what is fixed, the KV cache asked for, and what fits.
struct serving_budget {
  std::int64_t capacity = 0, usable = 0;           ///< device bytes; usable = capacity · utilization
  std::int64_t parameter_count = 0, weights = 0;   ///< parameters and their bytes
  std::int64_t workspace = 0;                      ///< prefill's activation peak (inference forward peak)
  std::int64_t cuda_context = 0, cublas_workspace = 0;
  /// hf with serving::model_allocator: the caching allocator model's max_memory_reserved over
  /// generate() (0: not modelled) and what it holds above the peak's tensors
  std::int64_t reserved_peak = 0, allocator_reserve = 0;
  /// ... where the cache would outgrow the device (capacity less the context): the reserved peak
  /// is that limit (PyTorch frees its cached segments and retries before an OOM), and whether
  /// the run under the limit still ran out of memory
  bool allocator_capped = false, allocator_out_of_memory = false;
  std::int64_t kv_bytes_per_token = 0;             ///< all layers, K and V
  std::int64_t kv_tokens_per_sequence = 0;         ///< min(context, window) in whole blocks
  std::int64_t kv_cache_bytes = 0;                 ///< for `concurrency` sequences
  std::int64_t kv_available = 0;                   ///< usable − fixed (negative: the weights alone do not fit)
  std::int64_t max_concurrent_tokens = 0;          ///< whole blocks that fit, in tokens
  std::int64_t max_sequences = 0;                  ///< sequences of `context` tokens that fit at once
  std::int64_t max_context = 0;                    ///< longest single sequence (positions bound it unless beyond_positions)
  std::int64_t context = 0, concurrency = 0;
  serving_engine engine = serving_engine::vllm;

  constexpr std::int64_t fixed() const { return weights + workspace + cuda_context + cublas_workspace; }
  constexpr std::int64_t total() const { return fixed() + kv_cache_bytes + allocator_reserve; }
  constexpr bool fits() const { return !allocator_out_of_memory && total() <= usable; }
};

/// KV cache bytes per token over all layers: 2 · layers · kv_heads · head_dim · bytes(kv).
constexpr std::int64_t kv_bytes_per_token(const models::llama_config& g, dtype kv) {
  if (kv != dtype::fp8 && kv != dtype::fp16 && kv != dtype::bf16 && kv != dtype::fp32) detail::kv_cache_dtype_must_be_fp8_fp16_bf16_or_fp32();
  if (g.heads <= 0 || (g.head_dim == 0 && g.width % g.heads != 0)) detail::heads_do_not_divide_model_width();
  const auto kv_heads = g.kv_heads > 0 ? g.kv_heads : g.heads;
  return checked_mul(checked_mul(2 * g.layers, kv_heads), g.per_head()) * bytes_per_element(kv);
}

namespace detail {

/// What the caching allocator of a generate() process on `dev` may reserve: the capacity less
/// what the process holds outside it (PyTorch frees its cache and retries before passing it).
constexpr std::int64_t generate_allocator_limit(const device& dev) { return dev.capacity - inference_context_of(dev); }

constexpr void check_serving(const models::llama_config& g, const serving& s) {
  if (s.context <= 0 || s.concurrency <= 0 || s.block_size <= 0 || s.prefill_chunk < 0 || s.prefill_sequences <= 0) invalid_serving_setting();
  if (s.generated < 0 || s.generated >= s.context) generated_tokens_must_leave_a_prompt();
  if (s.utilization_percent <= 0 || s.utilization_percent > 100) invalid_serving_setting();
  if (s.weights != base_weights::same && !is_quantized(s.weights)) serving_weights_must_be_same_or_quantized();
  if (g.sliding_window < 0 || g.sliding_window > g.context) sliding_window_larger_than_the_context();
  if ((g.gemma_alternating() || g.olmo3) && s.engine != serving_engine::hf)
    fail("gpubudget: serving Gemma 2, Gemma 3 or OLMo 3 with vLLM is not modelled (its KV cache manager for layers that alternate sliding "
         "and full attention); transformers' generate() is (serving_engine::hf)");
  if (s.context > g.context && !s.beyond_positions) context_beyond_the_models_positions();
  if (g.padded_batch && s.engine != serving_engine::hf) padded_batch_needs_the_hf_engine();
}

/// Tokens a sequence of `context` keeps in the cache, in whole blocks.
constexpr std::int64_t cached_tokens(const models::llama_config& g, const serving& s, std::int64_t context) {
  const auto held = g.sliding_window > 0 && g.sliding_window < context ? g.sliding_window : context;
  return (held + s.block_size - 1) / s.block_size * s.block_size;
}

/// Calls `f` with `g`'s decoder layers, each as `block(g, sliding)` makes it (models::visit_decoder_layers).
template <class Block, class F>
constexpr decltype(auto) visit_serving_layers(const models::llama_config& g, Block block, F&& f) {
  return models::visit_decoder_layers(g, [&](bool sliding) { return block(g, sliding); }, f);
}

/// The prefill's forward peak (activations and temporaries) at `length` tokens through the
/// decoder body (`block(config, sliding)`: one decoder layer); the LM head runs on the last position
/// of each sequence only (vLLM's LogitsProcessor gathers the sampled positions before lm_head),
/// so its weights count, its logits are small.
/// With `decode` (serving::model_allocator), the prefill is replayed through the caching allocator
/// model and generate()'s decode steps after it (the budget's reserved_peak).
template <class Block>
constexpr memory_budget prefill_budget(models::llama_config g, const serving& s, std::int64_t length, const device& dev, Block block,
                                       const detail::decode_stream& decode = {}) {
  g.seq = length;
  // vLLM writes its paged KV cache in place (the budget's own term); generate()'s DynamicCache
  // copies k and v in the prefill's forward (training_kv_cache), the copies SDPA then reads:
  // the prefill's walk holds them with its output, whatever the config's use_cache says
  // (generation_config.use_cache)
  g.use_cache = s.engine == serving_engine::hf;
  // generate() passes an attention_mask (vLLM's kernels take the window themselves) and derives
  // position_ids of the batch's shape from it (_prepare_position_ids_for_generation: attention_mask
  // cumsum): per-sample masks and RoPE tables
  if (s.engine == serving_engine::hf) g.attention_mask_passed = g.per_sample_rope = true;
  if (g.context < length) g.context = length;  // beyond_positions: RoPE has no position table
  auto plan = for_runtime(training{.batch = s.prefill_sequences, .precision = s.precision, .inference = true}, s.runtime);
  plan.cpu_capability = s.cpu_capability;
  return visit_serving_layers(g, block, [&](const auto& layers) {
    const auto body = is_quantized(s.weights) ? sequential(tokens(g.seq), frozen_embedding(g.vocab, g.width, s.weights), scale_if(g.scales_embedding()),
                                                          layers, models::family_norm(g, s.weights))
                                               : sequential(tokens(g.seq), embedding(g.vocab, g.width), scale_if(g.scales_embedding()), layers, models::family_norm(g));
    if (!decode.active) return budget_totals(body, plan, dev);
    auto replayed = plan;
    replayed.model_allocator = true, replayed.allocator = s.allocator;
    auto setup = detail::replay_setup_for(dev);
    setup.cublas_handles = 1, setup.decode = decode;  // no autograd thread: one cuBLAS handle
    setup.cap = generate_allocator_limit(dev);
    return detail::totals_replayed(body, replayed, dev, setup);
  });
}

/// The solvers: what fits in `kv_available` bytes.
constexpr void solve_capacity(serving_budget& b, const models::llama_config& g, const serving& s) {
  const auto block_bytes = checked_mul(b.kv_bytes_per_token, s.block_size);
  const auto blocks = b.kv_available > 0 ? b.kv_available / block_bytes : 0;
  b.max_concurrent_tokens = blocks * s.block_size;
  b.max_sequences = b.max_concurrent_tokens / b.kv_tokens_per_sequence;
  const auto positions = s.beyond_positions ? b.max_concurrent_tokens : g.context;
  const bool window_fits = g.sliding_window > 0 && b.max_concurrent_tokens >= cached_tokens(g, s, g.sliding_window);
  b.max_context = window_fits ? positions : (b.max_concurrent_tokens < positions ? b.max_concurrent_tokens : positions);
}

}  // namespace detail

namespace detail {

/// Weights and parameter count of a serving: the body's (`p`, a prefill budget) and an untied LM head.
constexpr void add_weights(serving_budget& b, const memory_budget& p, const models::llama_config& g, const serving& s) {
  const auto head = g.tied_head ? 0 : checked_mul(g.vocab, g.width);  // an untied lm_head's own weights
  const auto types = types_of(s.precision);
  b.parameter_count = is_quantized(s.weights) ? models::llama_parameter_count(g) : p.parameter_count + head;
  // quantized: the frozen layers' packed weights are the body's buffers (embedding included, in
  // 16 bit); the LM head is kept in 16 bit (transformers' BitsAndBytesConfig skips lm_head)
  b.weights = p.parameters + p.buffers + bytes_of(head, is_quantized(s.weights) ? types.half : types.parameters);
}

/// What transformers 5's DynamicCache holds in generate() (cache_utils.py), for all sequences.
/// A full-attention layer (DynamicLayer) keeps every token: `torch.cat([keys, key_states])`,
/// rebinding keys before values are concatenated, so a decode step holds one layer's old K
/// beside the grown one. A sliding-window layer (DynamicSlidingWindowLayer: every layer of a
/// model with a window, the sliding ones of Gemma 2, Gemma 3, OLMo 3) concatenates K and V and
/// keeps `full[:, :, -window + 1:]`, a view: after the prefill it holds the whole prompt's storage
/// until its first decode step replaces it by a window-sized one (op_rules.md L31).
struct dynamic_cache_bytes {
  std::int64_t after_prefill = 0, after_decode = 0;  ///< the cache's storages then
  std::int64_t tokens_after_decode = 0;              ///< a sequence's tokens in its longest layer then
  /// what the first and the last decode step hold besides the cache: its concatenation's old
  /// storages, or after them the attention's copies of the keys it reads (decode_attention_copies)
  std::int64_t first_step_copy = 0, last_step_copy = 0;
};

/// What one decode step's attention holds besides the cache while it reads `key_bytes` of one
/// layer's K (all sequences; V the same) in the cache's type `kv` (op_rules.md L32). A one-token
/// query keeps its mask only in a padded batch (_ignore_causal_mask_sdpa: padding_mask.all());
/// with a mask, grouped-query heads are repeated to every head (repeat_kv: use_gqa_in_sdpa needs
/// none), K and V copies of H/KVH times theirs. Without one SDPA gets enable_gqa: CUDA's kernels
/// read the grouped heads; 2.6 CPU's math path (sdpa_kernel_for) casts k and v to fp32, expands
/// them to every head and scales the expanded k (sdpa_math_no_grad): three fp32 copies.
/// How many times a padded batch's decode step repeats a layer's K (and V) for its masked SDPA
/// (repeat_kv to every head: the groups of grouped-query heads; 0 unpadded or without groups).
constexpr std::int64_t padded_kv_repeats(const models::llama_config& g) {
  const auto kv_heads = g.kv_heads > 0 ? g.kv_heads : g.heads, groups = g.heads / kv_heads;
  return g.padded_batch && groups > 1 ? groups : 0;
}
constexpr std::int64_t decode_attention_copies(const models::llama_config& g, runtime_kind r, dtype kv, std::int64_t key_bytes) {
  const auto kv_heads = g.kv_heads > 0 ? g.kv_heads : g.heads, groups = g.heads / kv_heads;
  if (groups == 1) return 0;
  if (g.padded_batch) return checked_mul(2 * padded_kv_repeats(g), key_bytes);
  if (r != runtime_kind::torch2_6_cpu) return 0;
  const auto fp32_keys = key_bytes / bytes_per_element(kv) * 4;
  return (kv == dtype::fp32 ? 0 : 2 * fp32_keys) + checked_mul(3 * groups, fp32_keys);
}

constexpr dynamic_cache_bytes dynamic_cache_of(const models::llama_config& g, const serving& s, std::int64_t layer_token_bytes) {
  const auto prompt = s.context - s.generated, kept = s.context - 1;  // the last token is sampled, never fed back
  const auto sliding = models::sliding_window_layers(g), full = g.layers - sliding;
  const auto window = g.sliding_window > 0 && g.sliding_window < kept ? g.sliding_window : kept;
  const auto per_sequence = [&](std::int64_t layers, std::int64_t tokens) { return checked_mul(checked_mul(layer_token_bytes, layers), checked_mul(tokens, s.concurrency)); };
  dynamic_cache_bytes c{};
  c.after_prefill = per_sequence(g.layers, prompt);
  c.after_decode = per_sequence(full, kept) + per_sequence(sliding, window);
  c.tokens_after_decode = full > 0 ? kept : window;
  // a full layer's old K (half a layer's bytes) beside the new; a sliding layer's old K and V views beside its new pair;
  // then the attention's copies of what the layer returned: every token at the first step, at the last the longest layer's
  const auto copies = [&](std::int64_t tokens) { return decode_attention_copies(g, s.runtime, s.kv, per_sequence(1, tokens) / 2); };
  c.first_step_copy = std::max({full > 0 ? per_sequence(1, prompt) / 2 : 0, sliding > 0 ? per_sequence(1, std::min(window, prompt + 1)) : 0,
                                copies(prompt + 1)});
  c.last_step_copy = std::max({full > 0 ? per_sequence(1, kept) / 2 : 0, sliding > 0 ? per_sequence(1, window) : 0, copies(c.tokens_after_decode)});
  return c;
}

/// The caching allocator model's terms of a generate() whose prefill budget `p` replayed it: past
/// the device's limit the run's reserved peak is that limit (the capped replay decides the OOM).
constexpr void add_allocator_reserve(serving_budget& b, const memory_budget& p, const device& dev) {
  const auto limit = generate_allocator_limit(dev);
  b.allocator_capped = p.reserved_peak > limit;
  b.allocator_out_of_memory = p.allocator_out_of_memory;
  b.reserved_peak = b.allocator_capped ? limit : p.reserved_peak;
  const auto tensors = b.weights + b.workspace + b.kv_cache_bytes + b.cublas_workspace;
  b.allocator_reserve = b.reserved_peak > tensors ? b.reserved_peak - tensors : 0;
}

/// generate()'s decode steps as the caching allocator replay takes them (serving::model_allocator
/// on CUDA; inactive otherwise): the DynamicCache's layers, the LM head and the logits.
constexpr decode_stream decode_stream_of(const models::llama_config& g, const serving& s) {
  if (!s.model_allocator || s.runtime != runtime_kind::torch2_cuda) return {};
  const auto types = types_of(s.precision);
  const auto per_layer_token = kv_bytes_per_token(g, s.kv) / g.layers / 2;  // one layer's K, one sequence
  decode_stream d{};
  d.active = true;
  d.steps = s.generated > 0 ? s.generated - 1 : 0;
  d.prompt = s.context - s.generated;
  d.token_bytes = checked_mul(per_layer_token, s.concurrency);
  d.window = g.sliding_window > 0 ? g.sliding_window : 0;
  d.layers = static_cast<std::int32_t>(g.layers), d.full_every = static_cast<std::int32_t>(models::sliding_window_period(g));
  d.head_weight = g.tied_head ? 0 : bytes_of(checked_mul(g.vocab, g.width), is_quantized(s.weights) ? types.half : types.parameters);
  d.logits = bytes_of(checked_mul(g.vocab, s.concurrency), types.parameters);
  d.logits_fp32 = bytes_of(checked_mul(g.vocab, s.concurrency), dtype::fp32);
  d.repeated_kv = padded_kv_repeats(g);
  return d;
}

/// transformers' generate() (serving_engine::hf; the file comment gives the sources).
template <class Block>
constexpr serving_budget generate_blocks(const models::llama_config& g, serving s, const device& dev, Block block) {
  serving_budget b{};
  b.context = s.context, b.concurrency = s.concurrency, b.capacity = dev.capacity, b.usable = dev.capacity;
  b.engine = serving_engine::hf;
  const auto prompt = s.context - s.generated;
  s.prefill_sequences = s.concurrency;
  const auto p = prefill_budget(g, s, prompt, dev, block, decode_stream_of(g, s));
  add_weights(b, p, g, s);
  b.cuda_context = inference_context_of(dev);  // a generate() process loads no backward kernels
  b.cublas_workspace = dev.cublas_workspace;
  b.kv_bytes_per_token = kv_bytes_per_token(g, s.kv);
  const auto c = dynamic_cache_of(g, s, b.kv_bytes_per_token / g.layers);
  b.kv_tokens_per_sequence = s.generated > 0 ? c.tokens_after_decode : prompt;  // after the prefill every layer holds the prompt
  b.kv_cache_bytes = s.generated > 0 ? c.after_decode : c.after_prefill;
  const auto types = types_of(s.precision);
  const auto logits = checked_mul(checked_mul(g.vocab, s.concurrency), bytes_per_element(types.parameters) + 4);  // the model's + an fp32 copy
  const auto prefill = std::max(p.step_peak, checked_add(p.after_forward, logits)) + p.input_batch;  // the walk holds c.after_prefill
  // a decode step's LM head, one row a sequence (x·Wᵀ): on the CPU OpenBLAS's buffer, after the layers' copies are gone (a
  // forward GEMM: no 16-bit copy of C on either ISA); the step's logits beside every moment of it
  const auto head_gemm = cpu_gemm_buffer(s.runtime, s.cpu_capability, {s.concurrency, g.vocab, g.width, false, true}, types.parameters);
  const auto step = std::max(c.after_prefill + std::max(c.first_step_copy, head_gemm), c.after_decode + std::max(c.last_step_copy, head_gemm));
  const auto decode = s.generated > 0 ? checked_add(step, logits) : 0;
  b.workspace = std::max(prefill, decode) - b.kv_cache_bytes;
  if (p.allocator_modelled) add_allocator_reserve(b, p, dev);
  b.kv_available = b.usable - b.fixed();
  // the tensors' line (the allocator's reserve is no cost per sequence: under the device's limit it frees its cache
  // and retries; serve_blocks holds the answer to the allocator model, allocator_max_sequences)
  const auto per_sequence = (b.workspace + b.kv_cache_bytes + s.concurrency - 1) / s.concurrency;
  const auto room = b.usable - b.weights - b.cuda_context - b.cublas_workspace;
  b.max_sequences = room > 0 ? room / per_sequence : 0;
  b.max_concurrent_tokens = checked_mul(b.max_sequences, s.context);
  const auto per_token = (per_sequence + s.context - 1) / s.context;
  const auto longest = room > 0 ? room / per_token : 0;
  b.max_context = s.beyond_positions || longest < g.context ? longest : g.context;
  return b;
}

/// With the caching allocator model (serving::model_allocator), the line's answer `linear` held to
/// the model: the most sequences, at most `linear`, whose generate() the allocator runs under the
/// device's limit (by bisection below `linear` when it does not).
template <class Block>
constexpr std::int64_t allocator_max_sequences(const models::llama_config& g, serving s, const device& dev, Block block, std::int64_t linear) {
  const auto runs = [&](std::int64_t n) { return s.concurrency = n, generate_blocks(g, s, dev, block).fits(); };
  if (linear <= 0 || runs(linear)) return linear;
  std::int64_t lo = 0, hi = linear;  // lo runs (0: nothing to run), hi does not
  while (hi - lo > 1) {
    const auto mid = lo + (hi - lo) / 2;
    (runs(mid) ? lo : hi) = mid;
  }
  return lo;
}

/// The serving budget of `g` whose decoder layers `block(g)` builds.
template <class Block>
constexpr serving_budget serve_blocks(const models::llama_config& g, const serving& s, const device& dev, Block block) {
  check_serving(g, s);
  if (s.engine == serving_engine::hf) {
    auto b = generate_blocks(g, s, dev, block);
    if (b.reserved_peak > 0) b.max_sequences = allocator_max_sequences(g, s, dev, block, b.max_sequences), b.max_concurrent_tokens = checked_mul(b.max_sequences, s.context);
    return b;
  }
  serving_budget b{};
  b.context = s.context;
  b.concurrency = s.concurrency;
  b.capacity = dev.capacity;
  b.usable = checked_mul(dev.capacity, s.utilization_percent) / 100;
  const auto prefill = s.prefill_chunk > 0 && s.prefill_chunk < s.context ? s.prefill_chunk : s.context;
  auto own_kernels = g;  // vLLM's attention kernels take the sliding window themselves: no mask
  own_kernels.kernel_window = true;
  own_kernels.eager_attention = false;  // nor does vLLM run transformers' attn_implementation
  const auto p = prefill_budget(own_kernels, s, prefill, dev, block);
  add_weights(b, p, g, s);
  // the body's peak, or its output with the last positions' fp32 logits after it (the head runs
  // once the body's temporaries are gone: op_rules.md LLM features #L4)
  const auto logits = bytes_of(checked_mul(g.vocab, s.concurrency), dtype::fp32);
  b.workspace = std::max(p.step_peak, p.after_forward + logits) + p.input_batch;
  b.cuda_context = dev.context;
  b.cublas_workspace = dev.cublas_workspace;
  b.kv_bytes_per_token = kv_bytes_per_token(g, s.kv);
  b.kv_tokens_per_sequence = cached_tokens(g, s, s.context);
  b.kv_cache_bytes = checked_mul(checked_mul(b.kv_bytes_per_token, b.kv_tokens_per_sequence), s.concurrency);
  b.kv_available = b.usable - b.fixed();
  solve_capacity(b, g, s);
  return b;
}

}  // namespace detail

/// The serving budget of Llama-style decoder `g` under `s` on `dev`. Quantized weights
/// (`s.weights`): each decoder linear is a frozen bitsandbytes layer whose matmul dequantizes its
/// weight into a temporary (4-bit) or quantizes its input into int8 with an int32 product (int8)
/// — layers/adapters.hpp frozen_matmul, the same op QLoRA uses; the KV cache is unchanged.
constexpr serving_budget serve(const models::llama_config& g, const serving& s, const device& dev) {
  using models::llama_config;
  if (is_quantized(s.weights)) {
    const models::lora_config frozen{.rank = 0, .targets = 0, .dropout_percent = 0, .base = s.weights};
    if (g.gemma_alternating()) return detail::serve_blocks(g, s, dev, [frozen](const llama_config& c, bool sliding) { return models::gemma_block_lora(c, frozen, sliding); });
    if (g.olmo2)
      return detail::serve_blocks(g, s, dev, [frozen](const llama_config& c, bool sliding) {
        return c.olmo3 ? models::olmo3_block_lora(c, frozen, sliding) : models::olmo2_block_lora(c, frozen);
      });
    if (g.granite) return detail::serve_blocks(g, s, dev, [frozen](const llama_config& c, bool) { return models::granite_block_lora(c, frozen); });
    return detail::serve_blocks(g, s, dev, [frozen](const llama_config& c, bool) { return models::llama_block_lora(c, frozen); });
  }
  if (g.gemma_alternating()) return detail::serve_blocks(g, s, dev, [](const llama_config& c, bool sliding) { return models::gemma_block(c, sliding); });
  if (g.olmo3) return detail::serve_blocks(g, s, dev, [](const llama_config& c, bool sliding) { return models::olmo3_block(c, sliding); });
  if (g.olmo2) return detail::serve_blocks(g, s, dev, [](const llama_config& c, bool) { return models::olmo2_block(c); });
  if (g.granite) return detail::serve_blocks(g, s, dev, [](const llama_config& c, bool) { return models::granite_block(c); });
  return detail::serve_blocks(g, s, dev, [](const llama_config& c, bool) { return models::llama_block(c); });
}

/// The serving budget of a Mixtral-style decoder `g` with experts `m`: every expert's weights
/// are loaded; the prefill routes its tokens as moe() does.
constexpr serving_budget serve(const models::llama_config& g, const models::moe_config& m, const serving& s, const device& dev) {
  if (s.weights != base_weights::same) detail::quantized_experts_are_not_modelled();
  return detail::serve_blocks(g, s, dev, [m](const models::llama_config& c, bool) { return models::mixtral_block(c, m); });
}

/// The part of a serving budget a fit check needs, as a structural type.
struct serving_summary {
  std::int64_t needed_mib = 0, usable_mib = 0, max_sequences = 0;
  constexpr serving_summary(const serving_budget& b)
      : needed_mib(to_mib_ceil(b.total())), usable_mib(b.usable / MiB), max_sequences(b.max_sequences) {}
};

template <std::int64_t NeededMiB, std::int64_t UsableMiB, std::int64_t MaxSequences>
struct serving_exceeds_gpu_memory {
  static_assert(NeededMiB <= UsableMiB,
                "gpubudget: the KV cache asked for does not fit: needed MiB > usable MiB; max sequences that fit (template arguments above)");
  static constexpr bool value = true;
};

/// `static_assert(require_serves<b>)`: true when `b` fits; otherwise a compile error naming the
/// needed and usable MiB and how many sequences of the asked context would fit.
template <serving_summary S>
inline constexpr bool require_serves = serving_exceeds_gpu_memory<S.needed_mib, S.usable_mib, S.max_sequences>::value;

/// A Markdown table of a serving budget: fixed part, KV cache, what fits.
inline std::string markdown_table(const serving_budget& b) {
  auto row = [](const char* what, const std::string& value) { return std::string("| ") + what + " | " + value + " |\n"; };
  std::string out = "| Serving | |\n|---|---|\n";
  out += row("Weights", format_bytes(b.weights));
  out += row(b.engine == serving_engine::hf ? "Prefill or decode peak above the cache (workspace)" : "Prefill activations (workspace)", format_bytes(b.workspace));
  out += row("CUDA context + cuBLAS", format_bytes(b.cuda_context + b.cublas_workspace));
  out += row("KV cache per token", format_bytes(b.kv_bytes_per_token));
  out += row("KV cache asked for", format_bytes(b.kv_cache_bytes) + " (" + std::to_string(b.concurrency) + " x " +
                                        std::to_string(b.kv_tokens_per_sequence) + " tokens)");
  if (b.reserved_peak > 0)
    out += row("Allocator reserve (caching allocator model)",
               format_bytes(b.allocator_reserve) + " (reserved peak " + format_bytes(b.reserved_peak) +
                   (b.allocator_capped ? std::string(b.allocator_out_of_memory ? ": the device's limit, and still out of memory"
                                                                               : ": the device's limit; PyTorch frees its cache and retries") : "") + ")");
  out += row("**Device total**", "**" + format_bytes(b.total()) + "** of " + format_bytes(b.usable) + " usable");
  out += row("Max concurrent tokens", std::to_string(b.max_concurrent_tokens));
  out += row("Max sequences of this context", std::to_string(b.max_sequences));
  out += row("Max context, one sequence", std::to_string(b.max_context));
  return out;
}

}  // namespace gpubudget
