// expect: patch_larger_than_image
// A ViT patch of 16 on an 8x8 image.
// Twin: tests/static/hardening_ok.cpp (patch_larger_than_image).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 8, 8), patch_embedding(64, 16));
constexpr auto b = budget_totals(m, training{.batch = 8}, devices::generic_16gb);

static_assert(b.parameter_count >= 0);

int main() {}
