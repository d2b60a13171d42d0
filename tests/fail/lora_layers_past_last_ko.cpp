// expect: layers_to_transform_past_the_last_layer
// PEFT's layers_to_transform naming layer 24 of Qwen2-0.5B's 24 layers (0 to 23): PEFT would adapt
// nothing there; named, not ignored.
// Twin: tests/static/lora_layers_ok.cpp (lora_layers_past_last).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::lora_config l{.rank = 8, .layers_to_transform = {20, 24}};
constexpr auto b = budget_totals(models::llama_lora(models::qwen2_0_5b(64), l), training{.batch = 1}, devices::a100_80gb);

static_assert(b.parameter_count > 0);

int main() {}
