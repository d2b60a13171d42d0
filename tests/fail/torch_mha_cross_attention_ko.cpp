// expect: torch_mha_is_self_attention_only
// nn.MultiheadAttention over 77 key/value tokens of another tensor (kv_tokens(77)): the library models
// its self-attention path (one packed in_proj over one input), not its cross-attention projections, so
// it stops rather than budget a wrong op sequence. The twin in tests/static/hardening_ok.cpp attends
// to its own 32 tokens.
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(32, 64), residual(layer_norm(), attention(64, heads(4), attention_impl::torch_mha, kv_tokens(77))));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
