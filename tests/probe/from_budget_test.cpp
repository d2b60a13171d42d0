// A compile-time budget checked against the fake device through budget_categories().
#include <catch2/catch.hpp>

#include <numeric>

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/probe/budget_check.hpp>
#include <gpubudget/probe/fake_device.hpp>
#include <gpubudget/budget_probe.hpp>

namespace probe = gpubudget::probe;
using namespace gpubudget;

namespace {
constexpr auto net = sequential(input(256, 512), repeat<4>(transformer_block(512, heads(8))), mean_over(0), linear(10));
constexpr auto b = budget_totals(net, training{.batch = 16, .optimizer = adamw}, devices::t4);

std::int64_t sum(const std::vector<probe::category>& cats) {
  return std::accumulate(cats.begin(), cats.end(), std::int64_t{0}, [](auto a, const auto& c) { return a + c.bytes; });
}
}  // namespace

TEST_CASE("budget categories cover the live tensors at peak plus workspace and rounding", "[probe][budget]") {
  const auto cats = probe::budget_categories(b);
  REQUIRE(sum(cats) == b.peak_tensor_bytes() + b.workspace() + b.allocator_rounding);
  REQUIRE(std::string(cats.front().name) == "Parameters");  // the labels of components(b)
  REQUIRE(cats.front().ph == probe::phase::resident);
  REQUIRE(cats.back().ph == probe::phase::transient);
}

TEST_CASE("the budget fits a fake T4-sized device and is released", "[probe][budget]") {
  probe::fake_device_config cfg;
  cfg.total_bytes = b.capacity;
  cfg.context_bytes = b.cuda_context;
  probe::fake_device dev(cfg);
  const auto r = probe::check_budget(dev, probe::budget_categories(b));
  REQUIRE(r.fits());
  REQUIRE(dev.outstanding() == 0);
}

TEST_CASE("the same budget on a device too small names the failing category", "[probe][budget]") {
  probe::fake_device_config cfg;
  cfg.total_bytes = b.resident() + b.cuda_context + b.gradients_at_peak + 64 * MiB;  // no room for the activations
  cfg.context_bytes = b.cuda_context;
  probe::fake_device dev(cfg);
  const auto r = probe::check_budget(dev, probe::budget_categories(b));
  REQUIRE_FALSE(r.fits());
  REQUIRE(r.failure.has_value());
  REQUIRE(r.failure->category == "Activations + temporaries (at peak)");
  REQUIRE(r.failure->asked == b.activations_at_peak());
  REQUIRE(dev.outstanding() == 0);
}
