// Twin of tests/fail/missing_input_ko.cpp: the model starts with input(512).
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count == 512 * 256 + 256 + 256 * 10 + 10);
}  // namespace
