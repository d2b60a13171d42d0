// expect: grid_sample_needs_an_image_and_a_grid
// parallel(merge_kind::grid_sample, x, grid) samples an image at a grid [h, w, 2]: an image twice is no grid.
// Twin: tests/static/hardening_ok.cpp (grid_sample_needs_an_image_and_a_grid).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(1, 28, 28), parallel(merge_kind::grid_sample, sequential(), sequential()));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
