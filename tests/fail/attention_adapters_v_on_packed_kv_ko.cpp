// expect: attention_adapters_do_not_fit_the_attention_impl
// An adapter on a separate v projection (adapt_v) of an attention whose k and v are one packed
// projection (split_qkv, GPT-2's c_attn): PEFT would find no such module.
// Twin: tests/static/hardening_ok.cpp (attention_adapters_v_on_packed_kv).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), attention(64, heads(4), attention_impl::split_qkv, attention_adapters{.rank = 4, .parts = adapt_v}));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
