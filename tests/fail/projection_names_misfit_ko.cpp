// expect: projection_names_do_not_fit_the_attention_impl
// Llama's names (q_proj, k_proj, v_proj apart) on split_qkv, whose k and v are one projection.
// Twin: tests/static/hardening_ok.cpp (projection_names_misfit).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 64), named("self_attn", attention(64, heads(4), projection_names::llama)));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
