// Twin of tests/fail/conv_groups_ko.cpp: 4 groups divide 64 input and 64 output channels.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(64, 32, 32), conv2d(64, 3, padding(1), groups(4)));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);
}  // namespace
