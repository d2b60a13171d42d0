// expect: kv_tokens_must_not_be_negative
// kv_tokens(-1) used to fall back to the query length silently.
// Twin: tests/static/hardening_ok.cpp (kv_tokens_negative).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), attention(64, heads(4), kv_tokens(-1)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
