// expect: layer_needs_float_features_not_token_ids
// Token ids straight into nn.Linear (no embedding): PyTorch raises ("addmm" not implemented for
// 'Long'); before, the ids were silently read as fp32 features.
// Twin: tests/static/hardening_ok.cpp (linear_on_token_ids).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(tokens(128), linear(64));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
