// Allocation granularity on the fake device, and the PyTorch caching-allocator model.
#include <catch2/catch.hpp>

#include <vector>

#include <gpubudget/probe/allocation_probe.hpp>
#include <gpubudget/probe/caching_allocator_model.hpp>
#include <gpubudget/probe/fake_device.hpp>
#include <gpubudget/probe/workspace_check.hpp>

namespace probe = gpubudget::probe;
namespace pa = gpubudget::probe::pytorch_allocator;

namespace {
constexpr std::int64_t MiB = 1LL << 20;
}

// The model is usable in constant expressions.
static_assert(pa::model(1) == pa::rounding{1, 512, 2 * MiB, 512, pa::pool::small});
static_assert(pa::model(0) == pa::rounding{0, 0, 0, 0, pa::pool::none});
// PyTorch's default cuBLAS workspace request, 8519680 B, lands in a 20 MiB segment: the
// segment torch.cuda.memory_snapshot() shows for it (discuss.pytorch.org thread "I met an
// unexpected memory allocation in torch.cuda.memory_snapshot()", total_size 20971520).
static_assert(pa::model(probe::pytorch_cublas_workspace_default).segment == 20971520);

TEST_CASE("caching allocator: 512-byte blocks", "[probe][allocator]") {
  CHECK(pa::round_size(1) == 512);
  CHECK(pa::round_size(512) == 512);
  CHECK(pa::round_size(513) == 1024);
  CHECK(pa::round_size(1000000) == 1000448);
}

TEST_CASE("caching allocator: small requests share 2 MiB segments", "[probe][allocator]") {
  const auto r = pa::model(MiB);  // the largest small request
  CHECK(r.block == MiB);
  CHECK(r.kind == pa::pool::small);
  CHECK(r.segment == 2 * MiB);
  CHECK(r.held == MiB);  // the rest of the segment serves other small requests
}

TEST_CASE("caching allocator: 1-10 MiB requests get 20 MiB segments", "[probe][allocator]") {
  const auto just_large = pa::model(MiB + 1);
  CHECK(just_large.block == MiB + 512);
  CHECK(just_large.kind == pa::pool::large);
  CHECK(just_large.segment == 20 * MiB);
  CHECK(just_large.held == MiB + 512);  // split: more than 1 MiB remains

  CHECK(pa::model(2 * MiB + 1).segment == 20 * MiB);
  CHECK(pa::model(10 * MiB - 512).segment == 20 * MiB);
  // The boundary is strict (size < kMinLargeAlloc): a 10 MiB block gets a 10 MiB segment, and
  // 10 MiB - 1 rounds up to that block.
  CHECK(pa::model(10 * MiB - 1).block == 10 * MiB);
  CHECK(pa::model(10 * MiB - 1).segment == 10 * MiB);
  CHECK(pa::model(10 * MiB).segment == 10 * MiB);
}

TEST_CASE("caching allocator: larger requests round to 2 MiB", "[probe][allocator]") {
  CHECK(pa::model(10 * MiB + 1).segment == 12 * MiB);
  const auto r = pa::model(20 * MiB + 1);
  CHECK(r.block == 20 * MiB + 512);
  CHECK(r.segment == 22 * MiB);
  CHECK(r.held == r.block);  // 2 MiB - 512 B remain: split off
  const auto tight = pa::model(19 * MiB + 1);
  CHECK(tight.segment == 20 * MiB);
  CHECK(tight.held == 20 * MiB);  // under 1 MiB remains: the block keeps the whole segment
}

TEST_CASE("PyTorch cuBLAS workspace defaults", "[probe][allocator]") {
  CHECK(probe::pytorch_cublas_workspace_default == 8519680);  // 8.125 MiB
  CHECK(probe::pytorch_cublas_workspace_bytes({8, 0}) == 8519680);
  CHECK(probe::pytorch_cublas_workspace_bytes({7, 5}) == 8519680);
  CHECK(probe::pytorch_cublas_workspace_bytes({9, 0}) == 32 * MiB);
  CHECK(probe::cublas_recommended_workspace_bytes({8, 6}) == 4 * MiB);
}

TEST_CASE("fake device rounds every allocation to its granularity", "[probe][allocation]") {
  probe::fake_device dev;
  CHECK(dev.rounded(0) == 0);
  CHECK(dev.rounded(1) == 2 * MiB);
  CHECK(dev.rounded(2 * MiB) == 2 * MiB);
  CHECK(dev.rounded(2 * MiB + 1) == 4 * MiB);

  const auto samples = probe::probe_allocations(dev, probe::default_allocation_requests);
  REQUIRE(samples.size() == probe::default_allocation_requests.size());
  for (const auto& s : samples) {
    INFO("asked " << s.bytes << " x " << s.count);
    CHECK(s.ok);
    CHECK(s.observed == dev.rounded(s.bytes) * s.count);
    CHECK(s.pytorch == pa::model(s.bytes));
  }
  CHECK(samples[0].observed == 2 * MiB);                       // 1 B
  CHECK(samples[1].observed_per_allocation() == Approx(2.0 * MiB));  // 64 x 1 B: no packing here
  CHECK(samples[0].overhead_per_allocation() == Approx(2.0 * MiB - 1));
  CHECK(probe::observed_granularity(samples) == 2 * MiB);
  CHECK(dev.outstanding() == 0);
}

TEST_CASE("allocation probe reports an allocation that does not fit", "[probe][allocation]") {
  probe::fake_device_config cfg;
  cfg.total_bytes = 1LL << 30;
  probe::fake_device dev(cfg);
  const std::vector<probe::allocation_request> reqs{{4LL << 30, 1}, {100 * MiB, 4}};
  const auto samples = probe::probe_allocations(dev, reqs);
  CHECK_FALSE(samples[0].ok);
  CHECK(samples[0].note == "out of memory (simulated)");
  CHECK(samples[0].observed == 0);
  CHECK(samples[1].ok);
  CHECK(samples[1].observed == 400 * MiB);
  CHECK(dev.outstanding() == 0);
}
