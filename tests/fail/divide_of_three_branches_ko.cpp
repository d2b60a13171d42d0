// expect: binary_merge_needs_two_branches
// parallel(merge_kind::divide, ...) is a / b: a third branch has no place.
// Twin: tests/static/hardening_ok.cpp (binary_merge_needs_two_branches).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), parallel(merge_kind::divide, sequential(), scale(), scale()));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
