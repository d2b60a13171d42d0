// Twin of tests/fail/huge_input_ko.cpp: 2¹⁰ per dimension is 2³⁰ elements, 4 GiB in fp32.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(1 << 10, 1 << 10, 1 << 10), relu());
constexpr auto b = budget_totals(m, training{.batch = 1}, devices::generic_16gb);

static_assert(b.parameter_count == 0);
static_assert(b.input_batch == 4 * GiB);
}  // namespace
