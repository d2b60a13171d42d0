// expect: auxiliary_output_needs_a_head
// parallel(merge_kind::auxiliary_output, main, head...) passes the main branch on and trains each
// head with a loss of its own: the main branch alone is no auxiliary output.
// Twin: tests/static/hardening_ok.cpp (auxiliary_output_needs_a_head).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), linear(64), parallel(merge_kind::auxiliary_output, sequential()), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
