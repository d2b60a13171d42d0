// Twin of tests/fail/repeat_reshapes_ko.cpp: the repeated block keeps width 512.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(16, 512), repeat<4>(linear(512), relu()));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

// Four distinct copies, each with its own 512×512 weight and bias.
static_assert(b.parameter_count == 4 * (512 * 512 + 512));
}  // namespace
