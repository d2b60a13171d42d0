// expect: cross_attention_outside_encoder_decoder
// A cross-attention needs an encoder's output to attend to: only inside encoder_decoder(...).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), cross_attention(64, heads(4), kv_tokens(16)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
