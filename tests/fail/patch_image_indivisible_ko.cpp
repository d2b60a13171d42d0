// expect: image_not_divisible_by_patch
// ViT-B/16 at 225²: 225 is not a whole number of 16-pixel patches; torchvision's VisionTransformer
// asserts image_size % patch_size == 0. Twin: tests/static/attention_unfold_facts.cpp (patch_tokens at 224, 448).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>

using namespace gpubudget;

constexpr auto b = budget_totals(models::vit_b_16(225), training{.batch = 2}, devices::generic_16gb);

static_assert(b.parameter_count > 0);

int main() {}
