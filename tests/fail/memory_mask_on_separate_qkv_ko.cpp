// expect: memory_mask_needs_torch_mha
// The memory's key padding mask on a cross_attention with q, k, v Linears of their own
// (attention_impl::separate_qkv): the mask is nn.MultiheadAttention's memory_key_padding_mask (F.multi_head_attention_forward
// expands it to the heads and SDPA keeps it), so it stops. The twin in tests/static/hardening_ok.cpp puts it
// on attention_impl::torch_mha.
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(encoder_decoder(sequential(input(48, 64), linear(64)),
                                              sequential(input(32, 64), cross_attention(64, heads(4), kv_tokens(48), attention_impl::separate_qkv, key_padding_mask))));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
