// expect: gaussian_latent_branches_differ
// A VAE's latent whose log-variance branch gives 16 values where the mean gives 20: z = mu + eps ·
// exp(logvar / 2) needs both of one shape, so it stops. The twin in tests/static/hardening_ok.cpp
// gives both 20.
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(784), linear(400), relu(), gaussian_latent(linear(20), linear(16)), linear(784));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
