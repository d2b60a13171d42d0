// expect: input_dimension_must_be_positive
// an image 0 pixels high.
// Twin: tests/static/hardening_ok.cpp (input_dimension_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 0, 32), conv2d(16, 1));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
