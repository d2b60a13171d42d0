// expect: attention_adapters_out_of_range
// attention_adapters with rank 0 (PEFT's LoraConfig needs r > 0).
// Twin: tests/static/hardening_ok.cpp (attention_adapters_rank_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), attention(64, heads(4), attention_impl::separate_qkv, attention_adapters{.rank = 0, .parts = adapt_q}));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
