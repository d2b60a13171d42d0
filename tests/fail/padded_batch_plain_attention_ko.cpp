// expect: padded_batch_needs_a_transformers_sdpa_attention
// padded_batch on an attention whose masks transformers does not build that way (GPT-2's flash path,
// no RoPE): named at compile time instead of budgeted as if unpadded. Twin: tests/unit/test_llm_zoo.cpp
// ("transformers 5's BERT on a padded batch ..."), where the same option on separate_qkv_sdpa is budgeted.
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto plain = sequential(tokens(64), embedding(100, 64), attention(64, heads(4), attention_impl::flash, padded_batch));
static_assert(budget_totals(plain, training{.batch = 2}, devices::h100_80gb).saved_activations > 0);

int main() {}
