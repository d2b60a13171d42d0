// expect: unknown_lora_target_module
// PEFT target_modules with a name Llama does not have (qkv_proj is Phi-3's packed projection:
// parse_lora_targets knows it, llama_lora refuses it).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::lora_config fused{8, parse_lora_targets("qkv_proj,v_proj"), 0, base_weights::same};
constexpr auto b = budget_totals(models::llama_lora(models::llama2_7b(64), fused), training{.batch = 1}, devices::a100_80gb);
static_assert(b.parameter_count > 0);

int main() {}
