// expect: sequence_longer_than_positions
// 129 tokens through 128 learned positions.
// Twin: tests/static/hardening_ok.cpp (sequence_longer_than_positions).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(tokens(129), embedding(100, 64), learned_positions(128), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
