// expect: device_capacity_must_be_positive
// a custom device of 0 bytes.
// Twin: tests/static/hardening_ok.cpp (device_capacity_zero).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, custom_device("none", 0));

static_assert(b.parameter_count >= 0);

int main() {}
