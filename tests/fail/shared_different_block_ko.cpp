// expect: shared_id_reused_for_a_different_block
// shared(1, ...) twice, once with linear(64), once with linear(32).
// Twin: tests/static/hardening_ok.cpp (shared_different_block).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), shared(1, linear(64), relu()), shared(1, linear(32), relu()), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
