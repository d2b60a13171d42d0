// expect: cross_attention_memory_width_differs
// Stable Diffusion's cross-attention reads the text states [77, 768] from 64-wide tokens: without
// kv_width(768) the library would take the states for 64 wide (its k and v FLOPs, the check of the
// memory it reads), so it stops. The twin in tests/static/hardening_ok.cpp says kv_width(768).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = conditioned(sequential(input(77, 768)), sequential(input(16, 64), cross_attention(64, heads(4), kv_tokens(77))));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
