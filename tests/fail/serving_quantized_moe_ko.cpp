// expect: quantized_experts_are_not_modelled
// Quantized experts are not modelled: serving Mixtral with nf4 weights is refused, not guessed.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/serving.hpp>

using namespace gpubudget;

constexpr auto s = serve(models::mixtral_8x7b(), models::moe_config{}, serving{.context = 4096, .weights = base_weights::nf4}, devices::h200);
static_assert(s.fits());

int main() {}
