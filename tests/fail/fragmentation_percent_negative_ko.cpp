// expect: fragmentation_percent_out_of_range
// a negative fragmentation reserve.
// Twin: tests/static/hardening_ok.cpp (fragmentation_percent_negative).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8, .fragmentation_percent = -5}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
