// expect: heads_do_not_divide_model_width
// 10 heads cannot split a width of 768 (768 / 10 is not whole).
// Twin: tests/static/heads_width_ok.cpp (12 heads).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(197, 768), attention(768, heads(10)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
