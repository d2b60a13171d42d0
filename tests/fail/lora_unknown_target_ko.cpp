// expect: unknown_lora_target_module
// PEFT target_modules with a name Llama does not have (qkv_proj is Phi-3's packed projection).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr auto targets = parse_lora_targets("qkv_proj,v_proj");
static_assert(targets > 0);

int main() {}
