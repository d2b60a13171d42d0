// expect: train_only_prefix_matches_no_record_name
// train_only = "haed" (for "head") used to freeze the whole model.
// Twin: tests/static/hardening_ok.cpp (train_only_typo).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), named("body", sequential(linear(64), relu())), named("head", linear(10)));
constexpr auto b = budget_totals(m, training{.batch = 8, .train_only = "haed"}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
