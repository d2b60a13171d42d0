// expect: shape_mismatch_between_layers
// An attention layer built for width 768 applied to [196, 512] tokens.
// Twin: tests/static/attention_width_mismatch_ok.cpp (input width 768).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(196, 512), attention(768, heads(12)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
