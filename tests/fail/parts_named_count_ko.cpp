// expect: parts_named_lists_another_number_of_parts
// Three names for an attention whose projections are four (q, k, v and the output Linear).
// Twin: tests/static/hardening_ok.cpp (parts_named_count).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 64), named("attn", parts_named("query,key,value", attention(64, heads(4), attention_impl::separate_qkv_sdpa,
                                                                                                      projection_names::separate))));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
