// LLM fine-tuning with LoRA and serving with a KV cache (issue D): three questions answered from
// one model description, the serving ones at compile time.
//  1. LoRA on Llama-2-7B (bf16 base, r = 16 on all linear layers) at 2k context on a 24 GB card,
//     and QLoRA (NF4 base with double quantization) at 2k context on a 16 GB GPU: fits, and with
//     what micro-batch?
//     With bitsandbytes' AdamW8bit the adapters' optimizer state shrinks 4x. With new tokens
//     (PEFT's modules_to_save: embed_tokens and lm_head trained whole), what it costs. After
//     PEFT's prepare_model_for_kbit_training (fp32 embedding, norms, head: lora_config::kbit_prepared),
//     and a full fine-tune in the model's own bf16 weights (training::master_weights = false).
//  2. How many 4k-token sequences does Llama-3-8B (bf16, bf16 KV) serve on an L4 / A10 / A100-80,
//     and with NF4 weights (bitsandbytes, the KV cache unchanged)?
//  3. Mistral-7B's sliding window: a 16k-token conversation keeps only 4096 tokens of KV.
//  4. Mixtral-8x7B: total vs active parameters, what loading, a LoRA fine-tune and serving need.
//  5. GPT-2 under PEFT (r = 8 on c_attn, its default target) at 1k tokens on a T4: PEFT's counts
//     and the fit checked by the compiler, beside a full fine-tune (activations dominate: LoRA
//     drops the weights' gradients and optimizer state, not the attention's saved tensors); and
//     BERT-base as a 2-class classifier under PEFT (query, value; the classifier in modules_to_save).
//  6. LoRA by module name on a model outside the transformers families (models::get_peft_model,
//     PEFT's target_modules rule): torchvision's ViT-B/16 with adapters on its MLPs (mlp.0,
//     mlp.3) on a T4: PEFT's count in a static_assert, and the largest micro-batch beside a full
//     fine-tune's; PEFT's lora.Embedding on a token model's nn.Embedding and its grouped lora.Conv
//     on a ResNeXt-style 3x3 of 32 groups, counted by the compiler.
//  7. Gemma-3-1B under QLoRA (models::visit_gemma3_lora: its layers alternate five sliding-window
//     layers and one full): PEFT's count by the compiler, the budget and largest micro-batch on an L4;
//     OLMo-2-1B (models::olmo2_lora: norms after the sublayers, q/k norms over the projections) the same;
//     OLMo-3-7B at 8k tokens (models::visit_olmo3_lora: OLMo 2's layers, a 4096-token window on three
//     of four) on an A100 40GB; Granite-3.1-2B (models::granite_lora: Llama's layers with
//     GraniteModel's multipliers, each a tensor more and nothing saved) on a T4; Gemma-2-2B
//     (models::visit_gemma2_lora: a window on every other layer, the logits soft-capped, whose tanh
//     output is kept) on a T4, as a free Colab notebook runs it, and what attn_implementation "eager"
//     (llama_config::eager_attention: the scores materialized) costs it.
//  8. transformers 5 as it runs: generate() of Gemma-3-1B on a T4 (serving_engine::hf; 22 of its 26
//     layers keep a 512-token window, models::sliding_window_layers, after the prefill held every
//     layer's copy of the whole prompt), Qwen2-7B's on an H100 through the caching allocator model
//     (serving::model_allocator) held to its measured device total, and PEFT's all-linear on transformers 5's Mixtral, whose
//     experts and router are no nn.Linear: the attention alone (models::mixtral_lora_targets).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/models/transformers.hpp>
#include <gpubudget/serving.hpp>

#include <iostream>
#include <tuple>

using namespace gpubudget;

// --- 2. serving, checked by the compiler ---------------------------------------------------------
constexpr serving four_k{.context = 4096, .concurrency = 1, .precision = pure_bf16, .kv = dtype::bf16};
constexpr auto on_l4 = serve(models::llama3_8b(), four_k, devices::l4);
constexpr auto on_a10 = serve(models::llama3_8b(), four_k, devices::a10);
constexpr auto on_a100 = serve(models::llama3_8b(), four_k, devices::a100_80gb);
static_assert(on_l4.kv_bytes_per_token == 131'072);
// An A100-80 holds dozens of 4k sequences beside the weights; an L4 a handful.
static_assert(on_a100.max_sequences >= 100);
static_assert(on_l4.max_sequences >= 4 && on_l4.max_sequences < 10);

// --- 5. GPT-2 under PEFT, checked by the compiler ------------------------------------------------
constexpr training gpt2_on_t4{.batch = 4, .precision = amp_fp16};
constexpr models::lora_config gpt2_adapters{.rank = 8, .targets = c_attn};
constexpr auto gpt2_lora = budget_totals(models::gpt_lora(models::gpt2_small(1024), gpt2_adapters), gpt2_on_t4, devices::t4);
static_assert(gpt2_lora.trainable_count == 294'912 && gpt2_lora.parameter_count == 124'734'720);  // PEFT's print_trainable_parameters
static_assert(fits(gpt2_lora));
constexpr models::lora_config bert_adapters{.rank = 8, .targets = bert_query | bert_value, .labels = 2};
static_assert(models::bert_lora_counts(models::bert_base(512), bert_adapters).trainable == 296'450);  // 294,912 + the classifier's 1,538
// T5-small under PEFT's default (q, v in all 18 attentions), the model t5_lora makes from t5() by name
static_assert(budget_totals(models::t5_lora(models::t5_small(512), {.rank = 8, .targets = t5_q | t5_v}), training{.batch = 8}, devices::t4).trainable_count ==
              294'912);
// "Llama-3-8B in bf16 serves 4 sequences of 4k tokens on one L4" holds; 32 of 8k would not
// (tests/fail/serving_32x8k_l4_ko.cpp: serving_exceeds_gpu_memory<49514, 20321, 3>).
constexpr auto four_on_l4 = serve(models::llama3_8b(), serving{.context = 4096, .concurrency = 4}, devices::l4);
static_assert(require_serves<four_on_l4>);
// NF4 weights (bitsandbytes' 4-bit layout, 16-bit embedding and head) leave far more room for KV.
constexpr serving four_k_nf4{.context = 4096, .concurrency = 1, .precision = pure_bf16, .kv = dtype::bf16, .weights = base_weights::nf4};
constexpr auto on_l4_nf4 = serve(models::llama3_8b(), four_k_nf4, devices::l4);
static_assert(on_l4_nf4.max_sequences > 3 * on_l4.max_sequences);

// --- 6. LoRA by name on torchvision's ViT-B/16, checked by the compiler ------------------------
// r = 8 on each block's mlp.0 (768 -> 3072) and mlp.3 (3072 -> 768): 12 x 2 x 8 x (768 + 3072)
constexpr auto vit_lora = models::get_peft_model(models::vit_b_16(224, 1000), "mlp.0,mlp.3", {.rank = 8});
constexpr training vit_on_t4{.batch = 64, .precision = amp_fp16};
static_assert(budget_totals(vit_lora, vit_on_t4, devices::t4).trainable_count == 737'280);
// lora.Embedding on `embed`: lora_embedding_A [r, 32000] and lora_embedding_B [512, r]
constexpr auto token_model = sequential(tokens(256), named("embed", embedding(32000, 512)), named("mlp", linear(2048)), gelu(), named("head", linear(32000)));
static_assert(budget_totals(models::get_peft_model(token_model, "embed", {.rank = 8}), vit_on_t4, devices::t4).trainable_count == 8 * (32000 + 512));
// a grouped conv (PEFT >= 0.15): a dense lora_A [r, 128, 3, 3], lora_B [256, r / 32, 1, 1]; r a multiple of the 32 groups
constexpr auto resnext_like = sequential(input(128, 28, 28), named("conv2", conv2d(256, 3, padding(1), groups(32))), relu());
static_assert(budget_totals(models::get_peft_model(resnext_like, "conv2", {.rank = 32}), vit_on_t4, devices::t4).trainable_count ==
              32 * 128 * 9 + 256 * 1);
// an attention whose four Linears carry the model's own names (what gpubudget-export writes for a
// hand-written attention module): lora.Linear on `query` and `value`, A [8, 256] and B [256, 8] each
constexpr auto own_attention = sequential(
    input(64, 256), named("attn", parts_named("query,key,value,proj", attention(256, heads(8), attention_impl::separate_qkv_sdpa, projection_names::separate))));
static_assert(budget_totals(models::get_peft_model(own_attention, "query,value", {.rank = 8}), vit_on_t4, devices::t4).trainable_count == 2 * 8 * (256 + 256));

// --- 7. Gemma 3 under PEFT, counted by the compiler -----------------------------------------------
// r = 16 on all-linear, 26 layers x 16 x ((1152 + 1024) · 2 + (1152 + 256) · 2 + (1152 + 6912) · 3)
static_assert(models::lora_counts(models::gemma3_1b(), {16, all_linear, 0, base_weights::nf4}).trainable == 13'045'760);
// OLMo-2-0425-1B: 16 layers x 16 x ((2048 + 2048) · 4 + (2048 + 8192) · 3); its published 1,484,916,736 parameters
static_assert(models::lora_counts(models::olmo2_1b(), {16, all_linear, 0, base_weights::nf4}).trainable == 12'058'624);
static_assert(models::llama_parameter_count(models::olmo2_1b()) == 1'484'916'736);
// granite-3.1-2b: 40 layers x 16 x ((2048 + 2048) · 2 + (2048 + 512) · 2 + (2048 + 8192) · 3)
static_assert(models::lora_counts(models::granite3_2b(), {16, all_linear, 0, base_weights::nf4}).trainable == 28'180'480);
// gemma-2-2b: 26 layers x 16 x ((2304 + 2048) · 2 + (2304 + 1024) · 2 + (2304 + 9216) · 3); its published 2,614,341,888
static_assert(models::lora_counts(models::gemma2_2b(), {16, all_linear, 0, base_weights::nf4}).trainable == 20'766'720);
static_assert(models::llama_parameter_count(models::gemma2_2b()) == 2'614'341'888);
// Olmo-3-1025-7B: 32 layers x 16 x ((4096 + 4096) · 4 + (4096 + 11008) · 3)
static_assert(models::lora_counts(models::olmo3_7b(), {16, all_linear, 0, base_weights::nf4}).trainable == 39'976'960);

// --- 8. transformers 5's windows and Mixtral, checked by the compiler -------------------------------
static_assert(models::sliding_window_layers(models::gemma3_1b()) == 22);  // five of every six, and the last two
// all-linear on transformers 5's Mixtral-8x7B: q, k, v, o only, 32 x 8 x ((4096 + 4096) x 2 + (4096 + 1024) x 2)
static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), {}, {8, all_linear, 0, base_weights::same}).trainable == 6'815'744);

// --- 3. sliding window ---------------------------------------------------------------------------
constexpr auto mistral_16k = serve(models::mistral_7b(), serving{.context = 16384, .prefill_chunk = 2048}, devices::l4);
static_assert(mistral_16k.kv_tokens_per_sequence == 4096);

// --- 9. a padded batch: generate() on 8 prompts of unequal lengths, left-padded ----------------------
// With zeros in its attention_mask every layer's SDPA keeps a mask, a one-token query's too, and
// transformers repeats Llama-3-8B's 8 kv heads to its 32 for it (repeat_kv): each decode step holds
// 4 x a layer's K and V, where unpadded the concatenation held half a layer's (llama_config::padded_batch)
constexpr models::llama_config padded(models::llama_config g) {
  g.padded_batch = true;
  return g;
}
constexpr serving chat{.context = 4096, .concurrency = 8, .engine = serving_engine::hf, .generated = 3584};
constexpr auto chat_unpadded = serve(models::llama3_8b(), chat, devices::h100_80gb);
constexpr auto chat_padded = serve(padded(models::llama3_8b()), chat, devices::h100_80gb);
constexpr std::int64_t llama3_layer = std::int64_t{4096} * 8 * 4095;  // 2 x 8 kv heads x 128 x 2 B a token, 8 x 4095 tokens
static_assert(chat_padded.workspace - chat_unpadded.workspace == 4 * llama3_layer - llama3_layer / 2);

int main() {
  // --- 1. LoRA fine-tuning (run time: a 7B model's step is more than one constant evaluation) ---
  const auto g = models::llama2_7b(2048);
  const models::lora_config lora{16, parse_lora_targets("all-linear"), 5, base_weights::bf16};
  const auto counts = models::lora_counts(g, lora);
  std::cout << "## LoRA r=16 on all-linear, Llama-2-7B, 2k tokens, bf16 base, AMP bf16\n\n"
            << "trainable params: " << counts.trainable << " || all params: " << counts.all << "\n\n";
  const auto net = models::llama_lora(g, lora);
  const training plan{.batch = 1, .precision = amp_bf16, .checkpoint_blocks = true};
  const auto b = budget_totals(net, plan, devices::l4);
  std::cout << markdown_table(b) << "\n";
  std::vector<labelled_budget> rows;
  for (const auto& dev : {devices::l4, devices::a10, devices::a100_40gb})  // bf16: Ampere or newer
    rows.push_back({"LoRA, micro 1, checkpointed", budget_totals(net, plan, dev)});
  std::cout << comparison_table(rows) << "\n";
  // New tokens: PEFT's modules_to_save trains copies of embed_tokens and lm_head beside the
  // adapters, in the base's bf16 (weights, .grad and AdamW state: 8 B per parameter)
  auto saved = lora;
  saved.modules_to_save = models::save_embed_tokens | models::save_lm_head;
  const auto with_saved = budget_totals(models::llama_lora(g, saved), plan, devices::a100_40gb);
  std::cout << "With modules_to_save=[embed_tokens, lm_head]: trainable params: " << models::lora_counts(g, saved).trainable
            << ", optimizer state " << format_bytes(with_saved.optimizer_state) << ", device total " << format_bytes(with_saved.total())
            << " on an A100 40GB (" << (fits(with_saved) ? "fits" : "does not fit") << ")\n\n";

  // QLoRA: the same adapters on an NF4 (double-quantized) base, 16 GB GPU, checkpointed blocks
  const models::lora_config qlora{16, all_linear, 5, base_weights::nf4_dq};
  const auto qnet = models::llama_lora(g, qlora);
  const auto q16 = budget_totals(qnet, plan, devices::generic_16gb);
  const auto largest = max_micro_batch(qnet, plan, devices::generic_16gb, {1, 64});
  std::cout << "## QLoRA (NF4 + double quantization) r=16 on all-linear, Llama-2-7B, 2k tokens, 16 GB GPU\n\n"
            << markdown_table(q16) << "\nLargest micro-batch that fits (checkpointed blocks): " << largest << "\n\n";
  training plan8 = plan;
  plan8.optimizer = adamw8bit;  // bitsandbytes AdamW8bit: 2 B + absmax per adapter weight instead of 8 B
  const auto q16_8bit = budget_totals(qnet, plan8, devices::generic_16gb);
  std::cout << "| QLoRA on a 16 GB GPU | AdamW | AdamW8bit |\n|---|---|---|\n"
            << "| Optimizer state | " << format_bytes(q16.optimizer_state) << " | " << format_bytes(q16_8bit.optimizer_state) << " |\n"
            << "| Largest micro-batch | " << largest << " | " << max_micro_batch(qnet, plan8, devices::generic_16gb, {1, 64}) << " |\n\n";

  // The notebooks' QLoRA recipe calls PEFT's prepare_model_for_kbit_training first: embedding,
  // norms and lm_head in fp32, so the residual stream is fp32 between the 4-bit projections
  models::lora_config prepared = qlora;
  prepared.kbit_prepared = true;
  const auto qp = models::llama_lora(g, prepared);
  std::cout << "After prepare_model_for_kbit_training: parameters " << format_bytes(budget_totals(qp, plan, devices::generic_16gb).parameters)
            << " (" << format_bytes(q16.parameters) << " without), largest micro-batch " << max_micro_batch(qp, plan, devices::generic_16gb, {1, 64})
            << " (" << largest << " without)\n\n";

  // A full fine-tune of the model as transformers 5 loads it (its config's bfloat16, no fp32 copy)
  training bf16_weights = plan;
  bf16_weights.precision = pure_bf16;
  bf16_weights.master_weights = false;
  const auto full = budget_totals(models::llama(g), bf16_weights, devices::a100_80gb);
  std::cout << "Full fine-tune in its own bf16 weights (AdamW state bf16 too): weights + state " << format_bytes(full.parameters + full.optimizer_state)
            << ", device total " << format_bytes(full.total()) << " on an A100 80GB (" << (fits(full) ? "fits" : "does not fit") << ")\n\n";

  // --- 2. serving -------------------------------------------------------------------------------
  std::cout << "## Llama-3-8B bf16, 4k-token sequences (vLLM-style: 90 % utilization, 16-token blocks)\n\n"
            << "| Device | Weights | Prefill workspace | KV per token | Max concurrent tokens | Max 4k sequences | NF4 weights | Max 4k sequences, NF4 |\n"
            << "|---|---|---|---|---|---|---|---|\n";
  for (const auto* s : {&on_l4, &on_a10, &on_a100}) {
    const auto& dev = s == &on_l4 ? devices::l4 : s == &on_a10 ? devices::a10 : devices::a100_80gb;
    const auto q = serve(models::llama3_8b(), four_k_nf4, dev);
    std::cout << "| " << dev.name << " | " << format_bytes(s->weights) << " | " << format_bytes(s->workspace) << " | "
              << format_bytes(s->kv_bytes_per_token) << " | " << s->max_concurrent_tokens << " | " << s->max_sequences << " | "
              << format_bytes(q.weights) << " | " << q.max_sequences << " |\n";
  }
  std::cout << "\n## Mistral-7B, one 16k-token conversation on an L4 (sliding window 4096)\n\n" << markdown_table(mistral_16k);
  // --- 8. transformers' own generate(): Gemma-3-1B, 4 x (7680 + 512) tokens in fp16 on a T4 (no bf16) ---
  const serving gemma_generate{.context = 8192, .concurrency = 4, .precision = pure_fp16, .kv = dtype::fp16, .engine = serving_engine::hf,
                               .generated = 512};
  std::cout << "\n## Gemma-3-1B generate() on a T4: 4 x (7680 + 512) tokens, fp16 (4 full layers, 22 within 512 tokens)\n\n"
            << markdown_table(serve(models::gemma3_1b(), gemma_generate, devices::t4));
  // the same through the caching allocator model (serving::model_allocator: the prefill and every
  // decode step replayed), Qwen2-7B as measured on an H100 (transformers 5.17; benchmarks/accuracy/
  // reference/cuda-h100/real-libraries-h100.json, hf_qwen2_7b_gen_b8_p1024_n128: device_used
  // 18,210,422,784 B, max_memory_reserved 17,469,276,160 B)
  const serving qwen_generate{.context = 1152, .concurrency = 8, .engine = serving_engine::hf, .generated = 128, .model_allocator = true};
  const auto qwen = serve(models::qwen2_7b(), qwen_generate, devices::h100_80gb);
  std::cout << "\n## Qwen2-7B generate() on an H100: 8 x (1024 + 128) bf16 tokens, the caching allocator modelled\n\n" << markdown_table(qwen);
  const std::int64_t qwen_measured = 18'210'422'784;
  if (qwen.total() < qwen_measured * 97 / 100 || qwen.total() > qwen_measured * 103 / 100) return 1;
  std::cout << "\n## Llama-3-8B generate() on an H100: 8 x (512 + 3584) bf16 tokens, the prompts left-padded\n\n"
            << markdown_table(chat_padded) << "\nUnpadded, the peak above the cache would be " << format_bytes(chat_unpadded.workspace) << "\n";

  // --- 4. Mixtral-8x7B ------------------------------------------------------------------------
  const auto mx = models::mixtral_parameter_counts(models::mixtral_8x7b(), {});
  // LoRA r = 16 on q_proj, v_proj (PEFT's Mixtral default), bf16 base and adapters, 2k tokens,
  // checkpointed blocks, AdamW8bit
  const auto mg = models::mixtral_8x7b(2048);
  const models::lora_config mlora{16, q_proj | v_proj, 0, base_weights::same};
  const auto mnet = models::mixtral_lora(mg, {}, mlora);
  const training mplan{.batch = 1, .precision = pure_bf16, .optimizer = adamw8bit, .checkpoint_blocks = true};
  const auto mcounts = models::mixtral_lora_counts(mg, {}, mlora);
  std::cout << "\n## Mixtral-8x7B: " << mx.total << " parameters, " << mx.active << " active per token (top 2 of 8)\n\n"
            << "LoRA r=16 on q_proj,v_proj: trainable params: " << mcounts.trainable << " || all params: " << mcounts.all << "\n\n"
            << "| Device | Load (bf16 weights) | LoRA fine-tune, 2k tokens, micro 1 | Fits | Serve: max concurrent tokens | Max 4k sequences |\n"
            << "|---|---|---|---|---|---|\n";
  for (const auto& dev : {devices::a100_80gb, devices::h100_80gb, devices::h200}) {
    const auto s = serve(models::mixtral_8x7b(), models::moe_config{}, four_k, dev);
    const auto t = budget_totals(mnet, mplan, dev);
    std::cout << "| " << dev.name << " | " << format_bytes(s.weights) << " | " << format_bytes(t.total()) << " | " << (fits(t) ? "yes" : "no") << " | "
              << s.max_concurrent_tokens << " | " << s.max_sequences << " |\n";
  }
  std::cout << "\n" << markdown_table(budget_totals(mnet, mplan, devices::h200));

  // --- 5. GPT-2 under PEFT ---------------------------------------------------------------------
  const auto gpt2_full = budget_totals(models::gpt(models::gpt2_small(1024)), gpt2_on_t4, devices::t4);
  std::cout << "\n## GPT-2, 1k tokens, micro-batch 4, amp_fp16 on a T4\n\n"
            << "LoRA r=8 on c_attn: trainable params: " << gpt2_lora.trainable_count << " || all params: " << gpt2_lora.parameter_count << "\n\n"
            << "| | Gradients + optimizer state | Saved for backward | Device total | Fits |\n|---|---|---|---|---|\n";
  for (const auto& [what, b] : {std::pair{"full fine-tune", gpt2_full}, std::pair{"LoRA", gpt2_lora}})
    std::cout << "| " << what << " | " << format_bytes(b.gradients + b.optimizer_state) << " | " << format_bytes(b.saved_activations) << " | "
              << format_bytes(b.total()) << " | " << (fits(b) ? "yes" : "no") << " |\n";
  const auto bert = budget_totals(models::bert_lora_seq_cls(models::bert_base(512), bert_adapters, 10), training{.batch = 16, .precision = amp_fp16}, devices::t4);
  std::cout << "\nBERT-base, 2 classes, 512 tokens, micro-batch 16, LoRA r=8 on query, value: trainable params: " << bert.trainable_count
            << " || all params: " << bert.parameter_count << "; " << format_bytes(bert.total()) << " on a T4, " << (fits(bert) ? "fits" : "does not fit") << "\n";
  // A collator's padded batch on transformers 5's BERT (its default SDPA): every layer's SDPA keeps
  // the [16, 1, 512, 512] fp16 mask beside the efficient kernel's tensors (bert_config::padded_batch)
  auto bert5 = models::bert_base(512);
  bert5.attention = attention_impl::separate_qkv_sdpa;
  auto bert5_padded = bert5;
  bert5_padded.padded_batch = true;
  const training glue{.batch = 16, .precision = amp_fp16};
  const auto glue_unpadded = budget_totals(models::bert_seq_cls(bert5, 2, 10), glue, devices::h100_80gb);
  const auto glue_padded = budget_totals(models::bert_seq_cls(bert5_padded, 2, 10), glue, devices::h100_80gb);
  std::cout << "BERT-base under transformers 5, 2 classes, 16 x 512 tokens, AMP fp16 on an H100: saved for backward "
            << format_bytes(glue_unpadded.saved_activations) << " on equal-length sequences, " << format_bytes(glue_padded.saved_activations)
            << " on a padded batch\n";
  if (glue_padded.saved_activations - glue_unpadded.saved_activations != std::int64_t{12} * 16 * 512 * 512 * 2) return 1;
  // T5-small as transformers 5.17 runs it, through SDPA (t5_config::sdpa; transformers before 5.13: eager): the
  // position-bias masks send CUDA's self-attentions to SDPA's math path, cuDNN takes the cross-attention
  auto t5_sdpa = models::t5_small(512);
  t5_sdpa.sdpa = true;
  training t5_step{.batch = 16, .precision = amp_bf16, .loss = loss_kind::cross_entropy};
  t5_step.output_held = false;  // model(input_ids=..., labels=...).loss: the output dropped after the loss
  const auto t5_eager_b = budget_totals(models::t5(models::t5_small(512)), t5_step, devices::h100_80gb);
  const auto t5_sdpa_b = budget_totals(models::t5(t5_sdpa), t5_step, devices::h100_80gb);
  std::cout << "T5-small, 16 x 512 tokens, AMP bf16 on an H100: live peak " << format_bytes(t5_eager_b.peak_tensor_bytes()) << " eager (transformers 4 to 5.12), "
            << format_bytes(t5_sdpa_b.peak_tensor_bytes()) << " through SDPA (5.13 on)\n";
  // measured on an H200, transformers 5.17 (benchmarks/accuracy/reference/cuda-h200/real-libraries-h200.json,
  // hf_t5_small_b16_t512_bf16): max_memory_allocated 10,873,681,408 B, of which two 32 MiB cuBLAS workspaces
  const std::int64_t t5_measured = 10'873'681'408 - 2 * 32 * 1024 * 1024;
  if (t5_sdpa_b.peak_tensor_bytes() < t5_measured * 999 / 1000 || t5_sdpa_b.peak_tensor_bytes() > t5_measured * 1001 / 1000) return 1;

  // --- 6. LoRA by name on ViT-B/16 --------------------------------------------------------------
  const auto vit_full = models::vit_b_16(224, 1000);
  const auto lora_b = budget_totals(vit_lora, vit_on_t4, devices::t4), full_b = budget_totals(vit_full, vit_on_t4, devices::t4);
  std::cout << "\n## ViT-B/16 at 224², amp_fp16 on a T4, LoRA r=8 on mlp.0, mlp.3 by module name\n\n"
            << "trainable params: " << lora_b.trainable_count << " || all params: " << lora_b.parameter_count << "\n\n"
            << "| | Gradients + optimizer state | Saved for backward | Device total at micro-batch 64 | Largest micro-batch |\n|---|---|---|---|---|\n";
  for (const auto& [what, b, mb] : {std::tuple{"full fine-tune", full_b, max_micro_batch(vit_full, vit_on_t4, devices::t4)},
                                    std::tuple{"LoRA", lora_b, max_micro_batch(vit_lora, vit_on_t4, devices::t4)}})
    std::cout << "| " << what << " | " << format_bytes(b.gradients + b.optimizer_state) << " | " << format_bytes(b.saved_activations) << " | "
              << format_bytes(b.total()) << " | " << mb << " |\n";

  // --- 7. Gemma-3-1B under QLoRA --------------------------------------------------------------
  const models::lora_config g3_lora{16, all_linear, 0, base_weights::nf4};
  const training g3_plan{.batch = 1, .precision = amp_bf16, .checkpoint_blocks = true};  // each decoder layer, as transformers does
  models::visit_gemma3_lora(models::gemma3_1b(2048), g3_lora, [&](const auto& net) {
    const auto b = budget_totals(net, g3_plan, devices::l4);
    std::cout << "\n## Gemma-3-1B, QLoRA (NF4) r=16 on all-linear, 2k tokens, AMP bf16, every layer checkpointed, on an L4\n\n"
              << "trainable params: " << b.trainable_count << " || all params: " << b.parameter_count << "\n\n"
              << markdown_table(b) << "\nLargest micro-batch: " << max_micro_batch(net, g3_plan, devices::l4, {1, 64})
              << " (the logits over a 262,144-token vocabulary are most of the peak)\n";
    return 0;
  });
  const auto olmo = models::olmo2_lora(models::olmo2_1b(2048), g3_lora);
  std::cout << "\n## OLMo-2-1B, QLoRA (NF4) r=16 on all-linear, 2k tokens, AMP bf16, every layer checkpointed, on an L4\n\n"
            << markdown_table(budget_totals(olmo, g3_plan, devices::l4)) << "\nLargest micro-batch: " << max_micro_batch(olmo, g3_plan, devices::l4, {1, 64})
            << "\n";
  const auto granite = models::granite_lora(models::granite3_2b(4096), g3_lora);
  const training t4_plan{.batch = 1, .precision = amp_fp16, .checkpoint_blocks = true};  // a T4 has no bf16
  std::cout << "\n## Granite-3.1-2B, QLoRA (NF4) r=16 on all-linear, 4k tokens, AMP fp16, every layer checkpointed, on a T4\n\n"
            << markdown_table(budget_totals(granite, t4_plan, devices::t4))
            << "\nLargest micro-batch: " << max_micro_batch(granite, t4_plan, devices::t4, {1, 64}) << "\n";
  models::visit_olmo3_lora(models::olmo3_7b(8192), g3_lora, [&](const auto& net) {
    std::cout << "\n## OLMo-3-7B, QLoRA (NF4) r=16 on all-linear, 8k tokens (a 4096-token window on three layers of four), AMP bf16, every "
                 "layer checkpointed, on an A100 40GB\n\n"
              << markdown_table(budget_totals(net, g3_plan, devices::a100_40gb))
              << "\nLargest micro-batch: " << max_micro_batch(net, g3_plan, devices::a100_40gb, {1, 64}) << "\n";
    return 0;
  });
  models::visit_gemma2_lora(models::gemma2_2b(2048), g3_lora, [&](const auto& net) {
    std::cout << "\n## Gemma-2-2B, QLoRA (NF4) r=16 on all-linear, 2k tokens, AMP fp16, every layer checkpointed, on a T4\n\n"
              << markdown_table(budget_totals(net, t4_plan, devices::t4))
              << "\nLargest micro-batch: " << max_micro_batch(net, t4_plan, devices::t4, {1, 64})
              << " (the 256,000-token logits, their soft cap and the loss's fp32 copy are most of the peak)\n";
    return 0;
  });
  // attn_implementation "eager", as Gemma2ForCausalLM's training warning recommends: every layer keeps its soft-capped scores
  auto gemma2_eager = models::gemma2_2b(2048);
  gemma2_eager.eager_attention = gemma2_eager.attention_softcap = true;
  const training t4_no_ckpt{.batch = 1, .precision = amp_fp16};
  const auto saved_with = [&](const models::llama_config& g) {
    return models::visit_gemma2_lora(g, g3_lora, [&](const auto& net) { return budget_totals(net, t4_no_ckpt, devices::t4).saved_activations; });
  };
  std::cout << "\nThe same without checkpointing, saved for backward: SDPA (transformers' default) " << format_bytes(saved_with(models::gemma2_2b(2048)))
            << ", eager " << format_bytes(saved_with(gemma2_eager)) << "\n";
}
