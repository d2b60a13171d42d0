// expect: lora_option_is_modelled_on_the_llama_family
// PEFT's bias="all" on GPT-2: its Conv1D and LayerNorm biases would train beside frozen weights,
// which is not modelled there (the Llama family's Qwen2 biases are); named, not ignored.
// Twin: tests/static/lora_layers_ok.cpp (lora_bias_on_gpt2).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr auto m = models::gpt_lora(models::gpt2_small(64), {.rank = 8, .targets = c_attn, .bias = models::peft_bias::all});
static_assert(m.records.size() > 0);

int main() {}
