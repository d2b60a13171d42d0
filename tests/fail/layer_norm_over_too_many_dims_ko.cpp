// expect: layer_norm_over_more_dims_than_the_input_has
// nn.LayerNorm over four trailing dimensions of a [C, H, W] map (one would be the batch): a clear
// error, not a norm over whatever the record holds. Twin: tests/static/hardening_ok.cpp
// (layer_norm_over_all_dims).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(4, 8, 8), layer_norm(over_last(4)));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
