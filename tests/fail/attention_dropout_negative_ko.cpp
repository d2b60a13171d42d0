// expect: dropout_percent_out_of_range
// attention_dropout(-10).
// Twin: tests/static/hardening_ok.cpp (attention_dropout_negative).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), attention(64, heads(4), attention_dropout(-10)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
