// expect: batch_bounds_out_of_order
// max_micro_batch between 64 and 8: bounds the wrong way round.
// Twin: tests/static/hardening_ok.cpp (max_micro_batch_bounds).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));
constexpr auto mb = max_micro_batch(m, training{.batch = 8}, devices::generic_16gb, batch_bounds{64, 8});

static_assert(mb >= 0);

int main() {}
