// expect: vocabulary_size_must_be_positive
// an embedding table of 0 rows.
// Twin: tests/static/hardening_ok.cpp (vocabulary_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(tokens(16), embedding(0, 64), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
