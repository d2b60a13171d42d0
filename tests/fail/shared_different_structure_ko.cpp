// expect: shared_id_reused_for_a_different_block
// shared(1, ...) twice, once as linear + ReLU, once as the linear alone: the walk pairs records
// by position, so the second block cannot take the first one's weights.
// Twin: tests/static/hardening_ok.cpp (shared_different_block).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), shared(1, linear(64), relu()), shared(1, linear(64)), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
