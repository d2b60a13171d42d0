// expect: checkpoint_blocks_needs_a_repeated_block
// checkpoint_blocks on a model with no repeat(...) block changed nothing and said nothing.
// Twin: tests/static/hardening_ok.cpp (checkpoint_blocks_without_repeat).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8, .checkpoint_blocks = true}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
