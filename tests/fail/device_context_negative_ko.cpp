// expect: device_memory_terms_must_not_be_negative
// a CUDA context of -1 MB.
// Twin: tests/static/hardening_ok.cpp (device_context_negative).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, custom_device("odd", 16 * GB, -1 * MB));

static_assert(b.parameter_count >= 0);

int main() {}
