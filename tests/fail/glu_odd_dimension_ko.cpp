// expect: glu_dimension_not_even
// F.glu(x, dim=1) on 5 channels: GLU halves a dimension, and PyTorch refuses an odd one.
// Twin: tests/static/hardening_ok.cpp (glu_even_dimension).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(5, 16), glu(0));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
