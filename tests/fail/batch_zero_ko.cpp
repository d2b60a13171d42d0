// expect: batch_must_be_positive
// a batch of 0 samples.
// Twin: tests/static/hardening_ok.cpp (batch_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 0}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
