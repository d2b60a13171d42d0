// expect: kernel_size_must_be_positive
// a 0x0 convolution kernel.
// Twin: tests/static/hardening_ok.cpp (kernel_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 32, 32), conv2d(16, 0), relu());
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
