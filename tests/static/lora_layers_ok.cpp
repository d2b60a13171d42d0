// Twins of the layers_to_transform and bias must-not-compile tests in tests/fail/lora_layers_*_ko.cpp
// and lora_bias_on_gpt2_ko.cpp (the same models with the one argument made valid): each compiles,
// so each failing twin fails for its own reason. Qwen2-0.5B: 24 layers, width 896, 14 q / 2 kv heads of 64 (v_proj 896 -> 128).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

namespace {
using namespace gpubudget;

// lora_layers_past_last: layers 20 and 23, r = 8 on q_proj (896 -> 896) and v_proj (896 -> 128)
constexpr auto lora_layers_past_last_b = budget_totals(models::llama_lora(models::qwen2_0_5b(64), {.rank = 8, .layers_to_transform = {20, 23}}),
                                                       training{.batch = 1}, devices::a100_80gb);
static_assert(lora_layers_past_last_b.trainable_count == 2 * 8 * ((896 + 896) + (896 + 128)));

// lora_layers_empty: a range of one layer
constexpr models::lora_config lora_layers_empty_l{.rank = 8, .layers_to_transform = models::layer_set::range(4, 5)};
static_assert(lora_layers_empty_l.layers_to_transform.contains(4) && lora_layers_empty_l.layers_to_transform.adapted_of(24) == 1);

// lora_layers_index_range: layers 0 and 1
constexpr models::lora_config lora_layers_index_range_l{.rank = 8, .layers_to_transform = {0, 1}};
static_assert(lora_layers_index_range_l.layers_to_transform.runs_in(24) == 2);

// lora_layers_embed_tokens: embed_tokens without layers_to_transform (every layer)
static_assert(models::lora_counts(models::qwen2_0_5b(64), {.rank = 8, .targets = q_proj | v_proj | embed_tokens}).trainable ==
              24 * 8 * ((896 + 896) + (896 + 128)) + 8 * (151936 + 896));

// lora_layers_on_gpt2: GPT-2 without layers_to_transform
constexpr auto lora_layers_on_gpt2_m = models::gpt_lora(models::gpt2_small(64), {.rank = 8, .targets = c_attn});
static_assert(lora_layers_on_gpt2_m.records.size() > 0);

// lora_layers_too_many_runs: four separate ranges, 8 runs (the most)
constexpr auto lora_layers_too_many_runs_m = models::llama_lora(models::qwen2_0_5b(64), {.rank = 8, .layers_to_transform = {0, 2, 4, 6}});
static_assert(models::layer_set{0, 2, 4, 6}.runs_in(24) == 8 && lora_layers_too_many_runs_m.records.size() > 0);

// lora_bias_on_gpt2: bias="all" on Qwen2-0.5B: its q (896), k and v (128) biases train in each of 24 layers
static_assert(budget_totals(models::llama_lora(models::qwen2_0_5b(64), {.rank = 8, .bias = models::peft_bias::all}), training{.batch = 1},
                            devices::a100_80gb)
                  .trainable_count == 24 * 8 * ((896 + 896) + (896 + 128)) + 24 * (896 + 128 + 128));

}  // namespace
