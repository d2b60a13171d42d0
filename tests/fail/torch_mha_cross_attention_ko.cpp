// expect: torch_mha_cross_attention_needs_sdpa
// nn.MultiheadAttention over 77 key/value tokens of another tensor with need_weights=True
// (torch_mha_weights): its cross-attention is modelled as nn.TransformerDecoderLayer calls it
// (need_weights=False, SDPA), so the materialized path across two tensors stops. The twin in
// tests/static/hardening_ok.cpp takes torch_mha.
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(32, 64), residual(layer_norm(), attention(64, heads(4), attention_impl::torch_mha_weights, kv_tokens(77))));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
