// expect: context_beyond_the_models_positions
// Llama-2-7B has 4096 positions; serving 8192-token sequences needs beyond_positions = true.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/serving.hpp>

using namespace gpubudget;

constexpr auto s = serve(models::llama2_7b(), serving{.context = 8192}, devices::a100_80gb);
static_assert(s.fits());

int main() {}
