// expect: matmul_of_branches_needs_two_matrices
// parallel(merge_kind::matmul, ...) is torch.bmm of two activations: a third branch has no place.
// Twin: tests/static/hardening_ok.cpp (matmul_of_branches_needs_two_matrices).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(16, 64), parallel(merge_kind::matmul, sequential(), transpose(0, 1), sequential()));
constexpr auto b = budget_totals(m, training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
