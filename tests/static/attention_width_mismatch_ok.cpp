// Twin of tests/fail/attention_width_mismatch_ko.cpp: the tokens have the attention's width.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(196, 768), attention(768, heads(12)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);
}  // namespace
