// expect: lora_option_is_modelled_on_the_llama_family
// layers_to_transform on GPT-2 (its layer list transformer.h is not split into runs here).
// Twin: tests/static/lora_layers_ok.cpp (lora_layers_on_gpt2).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr auto m = models::gpt_lora(models::gpt2_small(64), {.rank = 8, .targets = c_attn, .layers_to_transform = {0}});
static_assert(m.records.size() > 0);

int main() {}
