// Budget check against the fake device: fits, does not fit, cleanup on every path.
#include <catch2/catch.hpp>

#include <sstream>
#include <stdexcept>
#include <vector>

#include <gpubudget/probe/budget_check.hpp>
#include <gpubudget/probe/fake_device.hpp>
#include <gpubudget/probe/report.hpp>

namespace probe = gpubudget::probe;
using probe::phase;

namespace {
constexpr std::int64_t MiB = 1LL << 20;
constexpr std::int64_t GiB = 1LL << 30;

probe::fake_device small_device() {
  probe::fake_device_config cfg;
  cfg.total_bytes = 4 * GiB;
  cfg.context_bytes = 256 * MiB;  // free at start: 3840 MiB
  return probe::fake_device(cfg);
}
}  // namespace

TEST_CASE("a budget that fits is allocated resident-first, measured, and released", "[probe][budget]") {
  probe::fake_device dev;  // 16 GiB, 256 MiB context, 2 MiB granularity
  const std::vector<probe::category> cats{
      {"parameters", 100 * MiB, phase::resident},
      {"activations", GiB + 1, phase::transient},
      {"optimizer state", 200 * MiB, phase::resident},
  };
  const auto r = probe::check_budget(dev, cats);

  REQUIRE(r.fits());
  REQUIRE_FALSE(r.failure.has_value());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].name == "parameters");
  CHECK(r.rows[1].name == "optimizer state");  // resident before transient
  CHECK(r.rows[2].name == "activations");
  CHECK(r.rows[0].observed == 100 * MiB);
  CHECK(r.rows[0].percent() == Approx(100.0));
  CHECK(r.rows[2].observed == GiB + 2 * MiB);  // one byte over 1 GiB costs a whole 2 MiB page
  CHECK(r.asked(phase::resident) == 300 * MiB);
  CHECK(r.observed(phase::transient) == GiB + 2 * MiB);
  CHECK(r.start.free == 16 * GiB - 256 * MiB);
  CHECK(r.peak.free == r.start.free - 300 * MiB - GiB - 2 * MiB);
  CHECK(r.headroom() == r.peak.free);
  CHECK(r.end.free == r.start.free);
  CHECK(r.not_returned() == 0);
  CHECK(dev.outstanding() == 0);
  CHECK(dev.bad_releases() == 0);
}

TEST_CASE("a budget that does not fit names the category, the bytes asked and the bytes free", "[probe][budget]") {
  auto dev = small_device();
  const std::vector<probe::category> cats{
      {"workspace", 64 * MiB, phase::transient},
      {"activations", 3 * GiB, phase::transient},
      {"weights", GiB, phase::resident},
  };
  const auto r = probe::check_budget(dev, cats);

  REQUIRE_FALSE(r.fits());
  REQUIRE(r.failure.has_value());
  const auto& f = *r.failure;
  CHECK(f.category == "activations");
  CHECK(f.ph == phase::transient);
  CHECK(f.asked == 3 * GiB);
  CHECK(f.free == 3840 * MiB - GiB - 64 * MiB);  // after weights (resident) and workspace
  CHECK(f.allocated_before == GiB + 64 * MiB);
  CHECK(f.status == probe::alloc_status::out_of_memory);
  CHECK(f.message == "out of memory (simulated)");

  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].outcome == probe::category_outcome::allocated);  // weights
  CHECK(r.rows[1].outcome == probe::category_outcome::allocated);  // workspace
  CHECK(r.rows[2].outcome == probe::category_outcome::failed);
  CHECK(r.asked(phase::transient) == 3 * GiB + 64 * MiB);
  CHECK(r.asked_allocated(phase::transient) == 64 * MiB);  // base of the device / asked column

  // Everything allocated before the failure was given back.
  CHECK(dev.outstanding() == 0);
  CHECK(dev.bytes_in_use() == 0);
  CHECK(r.end.free == r.start.free);

  std::ostringstream os;
  probe::print_budget_check(os, r);
  CHECK_THAT(os.str(), Catch::Contains("**Does not fit:** category `activations` (transient) asked for 3221225472 B"));
  CHECK_THAT(os.str(), Catch::Contains("with 2885681152 B (2.69 GiB) free"));
}

TEST_CASE("categories after a failure are not attempted", "[probe][budget]") {
  auto dev = small_device();
  const auto r = probe::check_budget(dev, {{"huge", 8 * GiB, phase::resident}, {"small", MiB, phase::transient}});
  REQUIRE(r.failure.has_value());
  CHECK(r.failure->category == "huge");
  CHECK(r.failure->allocated_before == 0);
  CHECK(r.rows[1].outcome == probe::category_outcome::not_attempted);
  CHECK(dev.allocation_calls() == 1);
  CHECK(dev.outstanding() == 0);
}

TEST_CASE("a device error mid-way still releases everything", "[probe][budget]") {
  probe::fake_device_config cfg;
  cfg.throw_on_allocation = 2;  // the third allocate() call throws
  probe::fake_device dev(cfg);
  const std::vector<probe::category> cats{
      {"a", 10 * MiB, phase::resident}, {"b", 10 * MiB, phase::resident}, {"c", 10 * MiB, phase::transient}};
  REQUIRE_THROWS_AS(probe::check_budget(dev, cats), std::runtime_error);
  CHECK(dev.allocation_calls() == 3);
  CHECK(dev.outstanding() == 0);
  CHECK(dev.bytes_in_use() == 0);
}

TEST_CASE("a reserve that does not stay free fails the check without a failed allocation", "[probe][budget]") {
  auto dev = small_device();
  probe::budget_check_options opt;
  opt.min_headroom_bytes = GiB;
  const std::vector<probe::category> cats{{"weights", 3 * GiB, phase::resident}};
  const auto r = probe::check_budget(dev, cats, opt);
  CHECK_FALSE(r.failure.has_value());
  CHECK(r.headroom() == 768 * MiB);
  CHECK_FALSE(r.headroom_ok());
  CHECK_FALSE(r.fits());
  CHECK(dev.outstanding() == 0);
}

TEST_CASE("empty and invalid categories", "[probe][budget]") {
  probe::fake_device dev;
  const auto r = probe::check_budget(dev, {{"frozen grads", 0, phase::resident}});
  CHECK(r.fits());
  CHECK(r.rows[0].outcome == probe::category_outcome::empty);
  CHECK(dev.allocation_calls() == 0);

  REQUIRE_THROWS_AS(probe::check_budget(dev, {{"bad", -1, phase::resident}}), std::invalid_argument);
  CHECK(dev.outstanding() == 0);
}

TEST_CASE("device_allocation releases exactly once", "[probe][budget]") {
  probe::fake_device dev;
  {
    auto a = dev.allocate(MiB);
    REQUIRE(a.ok());
    probe::device_allocation first(dev, a.handle);
    probe::device_allocation second = std::move(first);
    CHECK_FALSE(static_cast<bool>(first));
    CHECK(dev.outstanding() == 1);
    second.reset();
    CHECK(dev.outstanding() == 0);
  }
  CHECK(dev.bad_releases() == 0);
}
