// expect: train_only_names_an_unknown_part
// train_only = "attn.x_proj": GPT-2's attention op names its parts c_attn and c_proj only.
// Twin: tests/static/hardening_ok.cpp (train_only_unknown_part).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 64), named("attn", attention(64, heads(4), projection_names::gpt2)), named("head", linear(10)));
constexpr auto b = budget_totals(m, training{.batch = 2, .train_only = "attn.x_proj"}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
