// expect: lora_on_transformers5_mixtral_experts_is_not_modelled
// LoRA on Mixtral's w1 (transformers 4.x's expert Linears) of a transformers 5 Mixtral (moe_config's
// default moe_impl::grouped_mm): that model has no such module, so PEFT's count would be of
// something that does not exist; named, not counted.
// Twin: tests/unit/test_llm_zoo.cpp (the same targets on moe_impl::expert_modules are counted).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

static_assert(models::mixtral_lora_counts(models::mixtral_8x7b(), {}, {8, w1, 0, base_weights::same}).trainable > 0);

int main() {}
