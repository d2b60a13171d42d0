// expect: serving_weights_must_be_same_or_quantized
// serving::weights takes the precision's type (same) or a bitsandbytes quantization, not fp16.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/serving.hpp>

using namespace gpubudget;

constexpr auto s = serve(models::llama3_8b(), serving{.context = 4096, .weights = base_weights::fp16}, devices::l4);
static_assert(s.fits());

int main() {}
