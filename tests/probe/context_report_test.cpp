// Context cost (fake device, child protocol, child spawning), workspace comparison, and the
// full markdown report. `probe_fake_tests "[.sample]"` prints the sample quoted in docs/probes.md.
#include <catch2/catch.hpp>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gpubudget/probe/context_cost.hpp>
#include <gpubudget/probe/detail/spawn.hpp>
#include <gpubudget/probe/fake_device.hpp>
#include <gpubudget/probe/run_probes.hpp>

namespace probe = gpubudget::probe;
using probe::phase;

namespace {
constexpr std::int64_t MiB = 1LL << 20;
constexpr std::int64_t GiB = 1LL << 30;

const probe::conv_shape stem{.name = "conv1", .n = 32, .c = 3, .h = 224, .w = 224, .k = 64, .r = 7, .s = 7,
                             .pad_h = 3, .pad_w = 3, .stride_h = 2, .stride_w = 2};

probe::conv_workspace_info simulated_conv() {
  probe::conv_workspace_info w;
  w.available = true;
  w.note = "simulated";
  w.forward = 40 * MiB, w.backward_data = 0, w.backward_filter = 90 * MiB;
  w.forward_max = 300 * MiB, w.backward_data_max = 0, w.backward_filter_max = 500 * MiB;
  return w;
}
}  // namespace

TEST_CASE("fake device: context cost depends on module loading", "[probe][context]") {
  probe::fake_device dev;
  const auto lazy = dev.measure_context_cost(probe::module_loading::lazy);
  const auto eager = dev.measure_context_cost(probe::module_loading::eager);
  CHECK(lazy.measured);
  CHECK(lazy.context_bytes == 256 * MiB);
  CHECK(lazy.first_kernel_bytes == 2 * MiB);
  CHECK(lazy.library_bytes.value_or(-1) == 8 * MiB);
  CHECK(lazy.total() == 266 * MiB);
  CHECK(eager.total() == (256 + 2 + 320) * MiB);
  // The context is already charged: free memory = total - context.
  CHECK(dev.memory().free == 16 * GiB - 256 * MiB);
}

TEST_CASE("context child report round-trips and is found among other output", "[probe][context]") {
  const probe::context_child_report r{10 * GiB, 2 * MiB, 500 * MiB};
  const std::string line = probe::format_context_child_report(r);
  CHECK(line == "gpubudget-context-child after_context=10737418240 kernel=2097152 library=524288000");

  const auto parsed = probe::parse_context_child_report("cuBLAS says hi\n" + line + "\n");
  REQUIRE(parsed.has_value());
  CHECK(parsed->free_after_context == 10 * GiB);
  CHECK(parsed->kernel_bytes == 2 * MiB);
  CHECK(parsed->library_bytes.value_or(-1) == 500 * MiB);

  const auto no_library = probe::parse_context_child_report("gpubudget-context-child after_context=5 kernel=0");
  REQUIRE(no_library.has_value());
  CHECK_FALSE(no_library->library_bytes.has_value());

  CHECK_FALSE(probe::parse_context_child_report("").has_value());
  CHECK_FALSE(probe::parse_context_child_report("gpubudget-context-child kernel=3").has_value());
  CHECK_FALSE(probe::parse_context_child_report("gpubudget-context-child after_context=x kernel=3").has_value());
}

TEST_CASE("context cost is the parent's free memory minus the child's", "[probe][context]") {
  const probe::context_child_report child{10 * GiB - 300 * MiB, 2 * MiB, std::nullopt};
  const auto c = probe::context_cost_from(probe::module_loading::eager, 10 * GiB, child);
  CHECK(c.measured);
  CHECK(c.mode == probe::module_loading::eager);
  CHECK(c.context_bytes == 300 * MiB);
  CHECK(c.total() == 302 * MiB);
}

TEST_CASE("child processes get the environment the measurement needs", "[probe][context]") {
  const std::string script = "echo \"$GPUBUDGET_PROBE_CONTEXT_CHILD:${CUDA_MODULE_LOADING-unset}\"; exit 3";
  const auto unset = probe::detail::run_and_capture(
      "/bin/sh", {"-c", script}, {{probe::context_child_env, "1"}, {probe::module_loading_env, std::nullopt}});
  REQUIRE(unset.started);
  CHECK(unset.exit_code == 3);
  CHECK(unset.output == "1:unset\n");

  const auto eager = probe::detail::run_and_capture(
      "/bin/sh", {"-c", script}, {{probe::context_child_env, "0"}, {probe::module_loading_env, "EAGER"}});
  CHECK(eager.output == "0:EAGER\n");

  const auto missing = probe::detail::run_and_capture("/nonexistent/gpubudget-child", {}, {});
  CHECK_FALSE(missing.started);
  CHECK_FALSE(missing.error.empty());

  CHECK_FALSE(probe::detail::self_executable().empty());
}

TEST_CASE("workspace estimates are compared with the device's answers", "[probe][workspace]") {
  probe::fake_device_config cfg;
  cfg.conv = simulated_conv();
  probe::fake_device dev(cfg);
  const std::vector<probe::conv_estimate> convs{{stem, 64 * MiB}};
  const auto w = probe::check_workspaces(dev, 4 * MiB, convs);
  CHECK(w.cublas.estimated == 4 * MiB);
  CHECK(w.cublas.pytorch_default == 8519680);
  CHECK(w.cublas.device.available);
  REQUIRE(w.convs.size() == 1);
  CHECK(w.convs[0].device.step_peak() == 90 * MiB);  // passes run in turn: the largest counts
  CHECK(w.convs[0].margin() == -26 * MiB);           // the estimate is 26 MiB short

  probe::fake_device no_cudnn;
  const auto none = probe::check_workspaces(no_cudnn, 0, convs);
  CHECK_FALSE(none.convs[0].device.available);
  CHECK_THAT(none.convs[0].device.note, Catch::Contains("cuDNN"));
}

namespace {
probe::probe_plan sample_plan() {
  probe::probe_plan plan;
  plan.convs = {{stem, 64 * MiB}};
  plan.budget = {
      {"parameters", 330 * MiB, phase::resident},
      {"optimizer state (AdamW)", 660 * MiB, phase::resident},
      {"step peak (grads + activations)", 352 * MiB + 12345, phase::transient},
      {"cuBLAS workspace", probe::pytorch_cublas_workspace_default, phase::transient},
  };
  return plan;
}

probe::fake_device sample_device() {
  probe::fake_device_config cfg;
  cfg.conv = simulated_conv();
  return probe::fake_device(cfg);
}
}  // namespace

TEST_CASE("the full report has every section", "[probe][report]") {
  auto dev = sample_device();
  std::ostringstream os;
  CHECK(probe::run_probes(dev, sample_plan(), os) == probe::budget_fits);
  const std::string out = os.str();
  for (const char* heading : {"## Device", "## CUDA context cost", "## Allocation granularity (cudaMalloc)",
                              "## Workspace", "## Budget check on fake GPU (simulated)", "**Fits:**"}) {
    INFO(heading);
    CHECK_THAT(out, Catch::Contains(heading));
  }
  CHECK_THAT(out, Catch::Contains("| EAGER | 256.00 MiB | 2.00 MiB | 320.00 MiB | 578.00 MiB | simulated |"));
  CHECK(dev.outstanding() == 0);

  probe::probe_plan too_big = sample_plan();
  too_big.budget.push_back({"teacher model", 20 * GiB, phase::resident});
  std::ostringstream os2;
  CHECK(probe::run_probes(dev, too_big, os2) == probe::budget_does_not_fit);
  CHECK_THAT(os2.str(), Catch::Contains("**Does not fit:** category `teacher model` (resident)"));
  CHECK(dev.outstanding() == 0);
}

TEST_CASE("a throwing probe is reported and the run goes on", "[probe][report]") {
  probe::fake_device_config cfg;
  cfg.throw_on_allocation = 0;  // the allocation probe's first call
  probe::fake_device dev(cfg);
  std::ostringstream os;
  CHECK(probe::run_probes(dev, sample_plan(), os) == probe::budget_fits);
  CHECK_THAT(os.str(), Catch::Contains("> allocation probe failed: fake_device: injected runtime error"));
  CHECK(dev.outstanding() == 0);
}

// Hidden: prints the sample output quoted in docs/probes.md.
TEST_CASE("sample report on the fake device", "[.sample]") {
  auto dev = sample_device();
  probe::run_probes(dev, sample_plan(), std::cout);
  probe::fake_device_config small;
  small.name = "fake 4 GiB GPU (simulated)";
  small.total_bytes = 4 * GiB;
  probe::fake_device tiny(small);
  probe::probe_plan plan = sample_plan();
  plan.budget.push_back({"activations at batch 64", 3 * GiB, phase::transient});
  probe::print_budget_check(std::cout, probe::check_budget(tiny, plan.budget));
}
