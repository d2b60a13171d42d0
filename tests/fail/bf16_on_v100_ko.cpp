// expect: bf16_needs_compute_capability_8
// AMP bf16 on a V100 (compute capability 7.0, no bf16 arithmetic): the CLI refuses it
// (--allow-emulated-bf16 to budget it anyway); the C++ API refuses it the same way.
// Twin: tests/static/hardening_ok.cpp (bf16_on_v100).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8, .precision = amp_bf16}, devices::v100_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
