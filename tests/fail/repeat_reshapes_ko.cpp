// expect: repeated_block_must_keep_its_shape
// repeat<4> of a block that maps width 512 to 1024: the second copy would get the wrong width.
// Twin: tests/static/repeat_reshapes_ok.cpp (the block keeps width 512).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 512), repeat<4>(linear(1024), relu()));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
