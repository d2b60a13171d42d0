// expect: stride_must_be_positive
// a pooling window that never moves.
// Twin: tests/static/hardening_ok.cpp (stride_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 32, 32), conv2d(16, 3), max_pool2d(2, stride(0)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
