// expect: layer_needs_an_input_shape
// A model that does not start with input(...): the first linear layer has no input shape.
// Twin: tests/static/missing_input_ok.cpp (input(512) first).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
