// expect: window_size_must_be_positive
// Swin window attention over 0x0 windows.
// Twin: tests/static/hardening_ok.cpp (window_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 8, 32), window_attention(heads(2), 0));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
