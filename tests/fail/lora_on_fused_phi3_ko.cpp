// expect: lora_needs_a_plain_llama_config
// llama_lora adapts separate q/k/v and gate/up projections; Phi-3's fused ones need phi3_lora.
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr auto b = budget_totals(models::llama_lora(models::phi3_mini(64), models::lora_config{}), training{.batch = 1},
                                 devices::a100_80gb);

static_assert(b.parameter_count >= 0);

int main() {}
