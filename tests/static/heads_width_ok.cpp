// Twin of tests/fail/heads_width_ko.cpp: 12 heads of 64 split a width of 768.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(197, 768), attention(768, heads(12)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);
}  // namespace
