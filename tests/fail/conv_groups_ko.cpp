// expect: channels_not_divisible_by_groups
// A grouped convolution with 5 groups over 64 input channels (64 % 5 != 0).
// Twin: tests/static/conv_groups_ok.cpp (4 groups).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(64, 32, 32), conv2d(64, 3, padding(1), groups(5)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
