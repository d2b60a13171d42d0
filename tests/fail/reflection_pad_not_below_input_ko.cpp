// expect: reflection_pad_not_below_input
// nn.ReflectionPad2d(8) on an 8x8 map: PyTorch refuses a reflection pad as wide as the dimension
// it pads; the budget must not price an output PyTorch never makes. Twin: tests/static/hardening_ok.cpp
// (reflection_pad_below_input).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(4, 8, 8), pad(8, 8, 8, 8, pad_mode::reflect));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
