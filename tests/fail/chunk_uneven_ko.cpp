// expect: chunks_do_not_divide_the_dimension
// chunk(3, 0) of 8 channels: torch.chunk would make parts of 3, 3 and 2.
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(8, 4, 4), chunk(3, 0), conv2d(4, 1));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
