// expect: model_has_no_layers
// sequential() with nothing in it.
// Twin: tests/static/hardening_ok.cpp (empty_model).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential();
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
