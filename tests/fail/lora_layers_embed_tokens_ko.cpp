// expect: layers_to_transform_leaves_embed_tokens_without_an_adapter
// layers_to_transform with embed_tokens among the targets: PEFT's check_target_module_exists
// finds no layer index in `model.embed_tokens` and leaves it unadapted; refused, not ignored.
// Twin: tests/static/lora_layers_ok.cpp (lora_layers_embed_tokens).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::lora_config l{.rank = 8, .targets = q_proj | v_proj | embed_tokens, .layers_to_transform = {0, 1}};
constexpr auto b = budget_totals(models::llama_lora(models::qwen2_0_5b(64), l), training{.batch = 1}, devices::a100_80gb);

static_assert(b.parameter_count > 0);

int main() {}
