// expect: byte_count_overflows_64_bits
// A per-sample input of 2²¹·2²¹·2²¹ = 2⁶³ elements: its element count already overflows.
// Twin: tests/static/huge_input_ok.cpp (2¹⁰ per dimension).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(1 << 21, 1 << 21, 1 << 21), relu());
constexpr auto b = budget_totals(m, training{.batch = 1}, devices::generic_16gb);

static_assert(b.parameter_count == 0);

int main() {}
