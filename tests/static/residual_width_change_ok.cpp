// Twin of tests/fail/residual_width_change_ko.cpp: the branch projects back to width 512.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(16, 512), residual(layer_norm(), linear(1024), gelu(), linear(512)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);
}  // namespace
