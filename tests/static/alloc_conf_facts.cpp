// PYTORCH_CUDA_ALLOC_CONF as alloc_conf() reads it, and the caching allocator model's rounding
// (c10/cuda/CUDACachingAllocator.cpp round_size / roundup_power2_next_division), at compile time.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/detail/caching_allocator.hpp>

namespace {
using namespace gpubudget;

static_assert(alloc_conf("") == allocator_settings{});
static_assert(alloc_conf("expandable_segments:True").expandable_segments);
static_assert(!alloc_conf("expandable_segments:False").expandable_segments);
static_assert(alloc_conf("max_split_size_mb:512, expandable_segments:True").max_split_size == 512 * MiB);
static_assert(alloc_conf("roundup_power2_divisions:4").roundup_power2_divisions[15] == 4);
// [256:1,512:2,>:8]: sizes up to the 256 MiB interval get 1 (none), 512 MiB 2, above 8
constexpr auto listed = alloc_conf("roundup_power2_divisions:[256:1,512:2,>:8]").roundup_power2_divisions;
static_assert(listed[0] == 1 && listed[8] == 1 && listed[9] == 2 && listed[10] == 8 && listed[15] == 8);

// round_size: 512 B blocks; with 4 divisions, 1200 MiB lies in [1024, 2048) MiB: rounds to 1280 MiB
static_assert(detail::round_request(allocator_settings{}, 1) == 512);
static_assert(detail::round_request(allocator_settings{}, 1025) == 1536);
static_assert(detail::round_request(alloc_conf("roundup_power2_divisions:4"), 1200 * MiB) == 1280 * MiB);
static_assert(detail::round_request(alloc_conf("roundup_power2_divisions:4"), 1024 * MiB) == 1024 * MiB);

// a 1 MiB + 1 B request: a large-pool block of a 20 MiB segment; a freed one is reused
constexpr bool reuses_cached_block() {
  detail::caching_allocator a{};
  const auto h = a.malloc(MiB + 1);
  a.free(h);
  a.malloc(MiB + 1);
  return a.reserved_peak() == 20 * MiB;
}
static_assert(reuses_cached_block());

// under a cap the allocator frees cached whole segments and retries before an OOM
constexpr bool capped_run_releases_cache(std::int64_t cap) {
  detail::caching_allocator a({}, cap);
  a.free(a.malloc(30 * MiB));  // a cached 30 MiB segment
  a.malloc(40 * MiB);          // does not fit in it: 70 MiB uncapped
  return !a.out_of_memory();
}
static_assert(capped_run_releases_cache(48 * MiB));
static_assert(!capped_run_releases_cache(38 * MiB));

// expandable segments map 20 MiB pages of one segment: three 12 MiB blocks take 40 MiB, not 3 x 12
constexpr std::int64_t three_blocks(const allocator_settings& conf) {
  detail::caching_allocator a(conf);
  for (int k = 0; k < 3; ++k) a.malloc(12 * MiB);
  return a.reserved_peak();
}
static_assert(three_blocks({}) == 36 * MiB);
static_assert(three_blocks(alloc_conf("expandable_segments:True")) == 40 * MiB);
}  // namespace

// With the allocator model, fits() and require_fits agree, and both ask the capped allocator
namespace capped {
using namespace gpubudget;
constexpr auto net = sequential(input(1024), linear(4096), gelu(), linear(1024));
constexpr auto b = budget(net, training{.batch = 8, .model_allocator = true}, devices::h100_80gb);
static_assert(b.allocator_modelled && fits(b) && require_fits<b>);
static_assert(b.reserved_peak >= b.peak_tensor_bytes());
// a device whose allocator may hold 150 MiB: the capped replay runs out (its cached blocks are
// split, nothing to release), and require_fits's numbers say so
constexpr auto small = custom_device("150 MiB", devices::h100_80gb.context + 150 * MiB, devices::h100_80gb.context);
constexpr auto c = budget(net, training{.batch = 8, .model_allocator = true}, small);
static_assert(!fits(c) && c.allocator_out_of_memory);
static_assert(fit_summary(c).needed_mib > fit_summary(c).available_mib);
}  // namespace capped
