// expect: condition_outside_conditioned
// condition() starts a branch from the conditioning tensor of the enclosing conditioned(condition,
// model): a model without one has none to read.
// Twin: tests/static/hardening_ok.cpp (condition_outside_conditioned).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(4, 8, 8), conv2d(16, 3, padding(1)),
                              parallel(merge_kind::add, sequential(), sequential(condition(8), linear(16), reshape(16, 1, 1))));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
