// expect: train_only_prefix_matches_no_record_name
// train_only = "blocks.3" where blocks = repeat(3, ...) has copies 0..2 (resnet50's `layer4.3`).
// Twin: tests/static/hardening_ok.cpp (train_only_copy_out_of_range).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64), named("blocks", repeat(3, named("fc", linear(64)), relu())), named("head", linear(10)));
constexpr auto b = budget_totals(m, training{.batch = 8, .train_only = "blocks.3"}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
