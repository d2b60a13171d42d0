// The valid twins of tests/fail/serving_weights_ko.cpp (an NF4 layout instead of fp16) and
// tests/fail/serving_quantized_moe_ko.cpp (Mixtral with its weights in the serving precision).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/serving.hpp>

namespace {
using namespace gpubudget;

constexpr auto nf4 = serve(models::llama3_8b(), serving{.context = 4096, .weights = base_weights::nf4}, devices::l4);
static_assert(nf4.fits());
constexpr auto mixtral = serve(models::mixtral_8x7b(), models::moe_config{}, serving{.context = 4096}, devices::h200);
static_assert(mixtral.fits());
}  // namespace
