// expect: sequence_first_needs_torch_mha
// sequence_first on SDPA-through-a-packed-projection attention (attention_impl::flash): the layout is
// nn.MultiheadAttention(batch_first=False)'s, whose copies it removes (a hand-written attention on
// [L, B, D] tokens reshapes them its own way), so it stops. The twin in tests/static/hardening_ok.cpp
// puts it on attention_impl::torch_mha (need_weights False and True, self- and cross-attention).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(32, 64), residual(layer_norm(), attention(64, heads(4), attention_impl::flash, sequence_first)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
