#include <catch2/catch.hpp>
#include <gpubudget/gpubudget.hpp>
using namespace gpubudget;
TEST_CASE("mlp parameter count") {
  constexpr auto m = sequential(input(1024), linear(4096), gelu(), linear(1024));
  constexpr auto b = budget(m, cpu_reference_step(8, adamw), devices::t4);
  REQUIRE(b.parameter_count == 8393728);
}
