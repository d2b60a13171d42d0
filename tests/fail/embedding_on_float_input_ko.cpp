// expect: embedding_needs_token_ids
// nn.Embedding on a float image: PyTorch raises "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int".
// Twin: tests/static/hardening_ok.cpp (embedding_on_float_input).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 32, 32), embedding(1000, 64));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
