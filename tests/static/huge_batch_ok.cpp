// Twin of tests/fail/huge_batch_ko.cpp: 2²⁰ images is absurd but countable in 64 bits; the
// budget is computed and simply does not fit.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(3, 224, 224), conv2d(64, 3), relu());
constexpr auto b = budget_totals(m, training{.batch = std::int64_t{1} << 20}, devices::generic_16gb);

static_assert(!fits(b));
// The input batch itself: 2²⁰ · 3·224·224 · 4 B.
static_assert(b.input_batch == (std::int64_t{1} << 20) * 3 * 224 * 224 * 4);
}  // namespace
