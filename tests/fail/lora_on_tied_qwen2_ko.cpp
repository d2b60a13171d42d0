// expect: lora_needs_a_plain_llama_config
// LoRA is modelled on the plain Llama layers; Qwen2's q/k/v biases and tied head are not.
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr auto b = budget_totals(models::llama_lora(models::qwen2_0_5b(64), models::lora_config{}), training{.batch = 1},
                                 devices::a100_80gb);

static_assert(b.parameter_count >= 0);

int main() {}
