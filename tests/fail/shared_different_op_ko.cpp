// expect: shared_id_reused_for_a_different_block
// shared(1, ...) twice at the same position with two ops that both own weights (a linear, then a
// layer_norm): op_descriptor::weight_signature pairs only the same op, or an op that owns none
// (a tied linear). Twin: tests/static/hardening_ok.cpp (shared_different_block).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), shared(1, linear(64), relu()), shared(1, layer_norm(), relu()), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
