// expect: shape_mismatch_between_layers
// A residual branch that widens [16, 512] to [16, 1024]: x + branch(x) cannot be added.
// Twin: tests/static/residual_width_change_ok.cpp (the branch projects back to 512).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 512), residual(layer_norm(), linear(1024), gelu()));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
