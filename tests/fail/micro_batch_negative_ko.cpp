// expect: micro_batch_must_not_be_negative
// a negative micro-batch used to fall back to the batch silently.
// Twin: tests/static/hardening_ok.cpp (micro_batch_negative).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8, .micro_batch = -2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
