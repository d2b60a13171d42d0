// expect: unknown_module_to_save
// LoRA's modules_to_save with a bit no module has (lm_head = 1, embed_tokens = 2): named, not ignored.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::lora_config l{8, q_proj | v_proj, 0, base_weights::same, false, true, 4};
constexpr auto b = budget_totals(models::llama_lora(models::qwen2_0_5b(64), l), training{.batch = 1}, devices::a100_80gb);

static_assert(b.parameter_count > 0);

int main() {}
