// expect: kbit_preparation_needs_a_quantized_base
// prepare_model_for_kbit_training prepares a k-bit model (bitsandbytes' 4- or 8-bit weights); on
// a bf16 base it would silently budget another model: a named error.
// Twin: tests/unit/test_adapters.cpp ("prepare_model_for_kbit_training: ...").
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::llama_config g{32000, 256, 2, 8, 2, 688, 2048, 64, false, 0};
constexpr models::lora_config l{8, q_proj | v_proj, 0, base_weights::bf16, false, true, 0, 0, true};
constexpr auto b = budget_totals(models::llama_lora(g, l), training{.batch = 2, .precision = amp_bf16}, devices::a100_80gb);

static_assert(b.parameter_count >= 0);

int main() {}
