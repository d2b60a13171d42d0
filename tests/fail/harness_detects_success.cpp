// expect: error:
// Harness self-check, the other way round: this file compiles, so the expected `error:` never
// appears and the fail.harness_detects_success test fails — which CMake's WILL_FAIL turns into
// a pass. If this test ever "fails", the harness accepts a compiling file as a must-not-compile
// test (e.g. PASS_REGULAR_EXPRESSION matching the build's command line instead of diagnostics).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);
static_assert(fits(b));

int main() {}
