// expect: heads_must_be_positive
// attention with 0 heads (used to be a division by zero).
// Twin: tests/static/hardening_ok.cpp (heads_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), attention(64, heads(0)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
