// expect: micro_batch_does_not_divide_batch
// batch 8 in micro-batches of 3: 8 = 3 x 2.67 accumulation steps.
// Twin: tests/static/hardening_ok.cpp (micro_batch_not_dividing).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8, .micro_batch = 3}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
