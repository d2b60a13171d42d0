// expect: lora_rank_must_be_positive_and_at_most_the_layer_width
// A LoRA adapter of rank 0 (PEFT rejects r <= 0).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr auto m = models::llama_lora(models::llama2_7b(512), models::lora_config{0, q_proj | v_proj, 0, base_weights::same});
static_assert(m.records.size() > 0);

int main() {}
