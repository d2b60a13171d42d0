// expect: upsample_scale_must_be_positive
// nn.Upsample(scale_factor=0): a scale factor of zero would give an empty map.
// Twin: tests/static/attention_unfold_facts.cpp (upsample(2), upsample(2, 4, bilinear)).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 32, 32), conv2d(16, 3, padding(1)), upsample(0));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
