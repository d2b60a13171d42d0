// expect: master_weights_off_needs_16_bit_parameters
// training::master_weights = false leaves out the fp32 master copy of 16-bit parameters; under
// AMP the parameters are fp32 (there is none to leave out): a named error, not a silent no-op.
// Twin: tests/unit/test_training_policy.cpp ("16-bit parameters without a master copy").
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto b = budget_totals(m, training{.batch = 8, .precision = amp_bf16, .master_weights = false}, devices::a100_80gb);

static_assert(b.parameter_count >= 0);

int main() {}
