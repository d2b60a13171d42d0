// ViT-L/16 fine-tuned on a V100 16GB in AMP fp16: how many images per step, with the caching
// allocator as it runs, decided at compile time.
//
// The flat 10 % fragmentation reserve says batch 60 does not fit. The caching allocator model
// (training::model_allocator: CUDACachingAllocator.cpp's pools, segments, best fit and splits,
// replayed over the warm-up step and the steps until the cache settles; under the device's cap
// it frees its cache and retries before an out-of-memory, op_rules.md A9) says it does, and that
// batch 66 does not. That budget replays about 2,200 tensor events per step three times: one
// constant evaluation of it needs ~1.4 M Clang steps, past Clang 14's default limit of
// 1,048,576. budget_totals_of gives the walk and each 1,024 storages of the replay an evaluation
// of its own (~0.35 M steps for the dearest), so the static_asserts below compile at both
// compilers' default limits.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>

#include <iostream>

using namespace gpubudget;

namespace {
inline constexpr auto net = models::vit_l_16(224, 1000);

constexpr training fine_tune(std::int64_t batch, bool allocator_model) {
  return training{.batch = batch, .precision = precision_mode::amp_fp16, .model_allocator = allocator_model};
}

constexpr training flat_60 = fine_tune(60, false), modelled_60 = fine_tune(60, true), modelled_66 = fine_tune(66, true);

// the flat reserve: 10 % over the live peak passes the 16 GB
constexpr auto flat_b = budget_totals(net, flat_60, devices::v100_16gb);
static_assert(!fits(flat_b));

// the caching allocator model: batch 60 runs (its reservation stays under the capacity), 66 does not
constexpr auto modelled_b = budget_totals_of<net, modelled_60, devices::v100_16gb>();
static_assert(modelled_b.allocator_modelled && fits(modelled_b) && !modelled_b.allocator_out_of_memory);
static_assert(modelled_b.total() < flat_b.total());
constexpr auto modelled_66_b = budget_totals_of<net, modelled_66, devices::v100_16gb>();
static_assert(!fits(modelled_66_b));
}  // namespace

int main() {
  std::cout << "# ViT-L/16 at 224², AMP fp16, AdamW, on a V100 16GB\n\n"
            << comparison_table({{"batch 60, flat 10 % reserve", flat_b},
                                 {"batch 60, caching allocator model", modelled_b},
                                 {"batch 66, caching allocator model", modelled_66_b}})
            << "\n## Batch 60, flat 10 % fragmentation reserve\n\n" << markdown_table(flat_b)
            << "\n## Batch 60, caching allocator model\n\n" << markdown_table(modelled_b)
            << "\n## Batch 66, caching allocator model\n\n" << markdown_table(modelled_66_b);
  // the largest batch each way, at run time (max_micro_batch_of gives the same in a static_assert,
  // one evaluation per probe, at a compile time of several probes)
  std::cout << "\nLargest batch: flat reserve " << max_micro_batch(net, fine_tune(8, false), devices::v100_16gb)
            << ", caching allocator model " << max_micro_batch(net, fine_tune(8, true), devices::v100_16gb) << "\n";
}
