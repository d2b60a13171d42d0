// expect: percent_of_capacity_out_of_range
// fits(b, 150): a target utilization above the whole device.
// Twin: tests/static/hardening_ok.cpp (fits_percent).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(fits(b, 150));

int main() {}
