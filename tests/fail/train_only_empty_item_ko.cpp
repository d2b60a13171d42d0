// expect: train_only_prefix_matches_no_record_name
// train_only = "head,": the empty item would match every name.
// Twin: tests/static/hardening_ok.cpp (train_only_empty_item).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), named("body", sequential(linear(64), relu())), named("head", linear(10)));
constexpr auto b = budget_totals(m, training{.batch = 8, .train_only = "head,"}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
