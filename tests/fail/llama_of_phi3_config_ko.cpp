// expect: fused_projections_are_built_by_phi3
// Phi-3's packed projections save more than separate ones: models::phi3 builds them.
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr auto b = budget_totals(models::llama(models::phi3_mini(64)), training{.batch = 1}, devices::a100_80gb);

static_assert(b.parameter_count >= 0);

int main() {}
