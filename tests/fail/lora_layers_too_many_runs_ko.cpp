// expect: layers_to_transform_makes_too_many_runs
// Every other layer of Qwen2-0.5B adapted: 24 runs of adapted and plain layers, past the 8 a LoRA
// stack holds (the record count stays independent of depth).
// Twin: tests/static/lora_layers_ok.cpp (lora_layers_too_many_runs).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::lora_config l{.rank = 8, .layers_to_transform = {0, 2, 4, 6, 8, 10, 12}};
constexpr auto m = models::llama_lora(models::qwen2_0_5b(64), l);
static_assert(m.records.size() > 0);

int main() {}
