// expect: kv_heads_must_not_be_negative
// kv_heads(-2) used to fall back to `heads` silently.
// Twin: tests/static/hardening_ok.cpp (kv_heads_negative).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), attention(64, heads(4), kv_heads(-2)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
