// expect: qkv_bias_on_torch_mha
// nn.MultiheadAttention has one bias argument for in_proj and out_proj: q, k, v without a bias
// beside an output with one is not a module it can be.
// Twin: tests/static/hardening_ok.cpp (qkv_bias_on_torch_mha).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 64), attention(64, heads(4), attention_impl::torch_mha, qkv_bias(false)));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
