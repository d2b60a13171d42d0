// expect: attention_masks_need_torch_mha_self_attention
// A key padding mask on SDPA-through-a-packed-projection attention (attention_impl::flash): the padding
// mask is nn.MultiheadAttention's (F.multi_head_attention_forward builds and merges it; flash takes
// SDPA's is_causal alone), so it stops. The twin in tests/static/hardening_ok.cpp puts the same masks on
// attention_impl::torch_mha.
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(32, 64), residual(layer_norm(), attention(64, heads(4), attention_impl::flash, causal_mask, key_padding_mask)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
