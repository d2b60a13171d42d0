// The tables contain the expected rows, with the numbers derived in test_device_fit.cpp for the
// three-layer MLP (input(4) → linear(8) → relu → linear(2), batch 1, AdamW foreach) on a 1 GiB
// card with a 100 MB context:
//   parameters 232 B, optimizer state 464 B, data 16 B, step peak 464 B of which .grad 232 B
//   (activations + temporaries 232 B: PyTorch 2.x's one foreach list), rounding 2,796 B,
//   fragmentation 397 B, live tensors 1,176 B, total 108,524,049 B.
#include <catch2/catch.hpp>
#include <gpubudget/gpubudget.hpp>

#include <string>
#include <vector>

namespace {
using namespace gpubudget;
using Catch::Matchers::Contains;

constexpr auto mlp = sequential(input(4), linear(8), relu(), linear(2));
constexpr training adamw1{.batch = 1, .optimizer = adamw};
constexpr device unit = custom_device("unit", 1 * GiB, 100 * MB);
}  // namespace

TEST_CASE("format_bytes: binary units, two decimals", "[report]") {
  REQUIRE(format_bytes(0) == "0 B");
  REQUIRE(format_bytes(1023) == "1023 B");
  REQUIRE(format_bytes(1024) == "1.00 KiB");
  REQUIRE(format_bytes(1536) == "1.50 KiB");
  REQUIRE(format_bytes(5 * GiB) == "5.00 GiB");
  REQUIRE(format_bytes(-2048) == "-2.00 KiB");
  REQUIRE(format_bytes(100000000) == "95.37 MiB");  // 10⁸ / 2²⁰ = 95.367
}

TEST_CASE("describe: the configuration in one line", "[report]") {
  REQUIRE(describe(budget_totals(mlp, adamw1, unit)) == "unit, batch 1, fp32, AdamW");
  constexpr training acc{.batch = 8, .micro_batch = 4, .precision = amp_bf16, .optimizer = sgd_momentum};
  REQUIRE(describe(budget_totals(mlp, acc, unit)) == "unit, batch 8 (micro 4 x 2 accumulation), AMP bf16, SGD+momentum");
  constexpr training inf{.batch = 2, .precision = pure_fp16, .inference = true};
  REQUIRE(describe(budget_totals(mlp, inf, unit)) == "unit, batch 2, fp16 + fp32 master, inference");
}

TEST_CASE("markdown_table: one row per non-zero component", "[report]") {
  const std::string t = markdown_table(budget_totals(mlp, adamw1, unit));
  CHECK_THAT(t, Contains("**unit, batch 1, fp32, AdamW**"));
  CHECK_THAT(t, Contains("| Component | Memory | Share |"));
  CHECK_THAT(t, Contains("| Parameters (58, 58 trainable) | 232 B | 0.0 % |"));
  CHECK_THAT(t, Contains("| Optimizer state | 464 B |"));
  CHECK_THAT(t, Contains("| Input batch | 16 B |"));
  CHECK_THAT(t, Contains("| Gradients (at peak) | 232 B |"));
  CHECK_THAT(t, Contains("| Activations + temporaries (at peak) | 232 B |"));
  // 10⁸ of 108,524,049: 92.1 %
  CHECK_THAT(t, Contains("| CUDA context | 95.37 MiB | 92.1 % |"));
  CHECK_THAT(t, Contains("| cuBLAS + cuDNN workspace |"));
  CHECK_THAT(t, Contains("| Allocator rounding (512 B blocks) | 2.73 KiB |"));  // 2,796 / 1,024
  CHECK_THAT(t, Contains("| Fragmentation reserve (10 %) | 397 B |"));
  // 108,524,049 B = 103.497 MiB
  CHECK_THAT(t, Contains("| **Device total** | **103.50 MiB** | 100.0 % |"));
  CHECK_THAT(t, Contains("| Capacity | 1.00 GiB | |"));
  // 1,073,741,824 − 108,524,049 = 965,217,775 B = 920.50 MiB
  CHECK_THAT(t, Contains("| Headroom | 920.50 MiB | fits |"));
  CHECK_THAT(t, Contains("Step detail: saved for backward 48 B, after forward 44 B, forward peak 64 B, "
                         "forward+backward peak 276 B, step peak 464 B (optimizer temporaries 232 B)."));
  // components that are zero have no row
  CHECK_THAT(t, !Contains("Buffers"));
  CHECK_THAT(t, !Contains("master weights"));
  CHECK_THAT(t, !Contains("EMA"));
  CHECK_THAT(t, !Contains("Teacher"));

  // ... and appear when they are not: EMA 232 B, BatchNorm buffers 2·2·4 + 8 = 24 B
  training e = adamw1;
  e.ema = true;
  const std::string te = markdown_table(budget_totals(sequential(input(2, 2, 2), batch_norm(), flatten(), linear(2)), e, unit));
  CHECK_THAT(te, Contains("| Buffers | 24 B |"));
  CHECK_THAT(te, Contains("| EMA copy | "));
  // a configuration that does not fit says so
  const std::string tiny = markdown_table(budget_totals(mlp, adamw1, custom_device("tiny", 64 * MiB)));
  CHECK_THAT(tiny, Contains("**does not fit**"));
}

TEST_CASE("csv_table: every component in bytes", "[report]") {
  const std::string expected =
      "component,bytes\n"
      "parameters,232\n"
      "buffers,0\n"
      "master_weights,0\n"
      "optimizer_state,464\n"
      "ema,0\n"
      "teacher,0\n"
      "input_batch,16\n"
      "gradients_at_peak,232\n"
      "activations_at_peak,232\n"
      "cuda_context,100000000\n"
      "workspace,8519680\n"
      "allocator_rounding,2796\n"
      "fragmentation,397\n"
      "live_tensor_bytes_at_peak,1176\n"
      "device_total,108524049\n"
      "capacity,1073741824\n";
  REQUIRE(csv_table(budget_totals(mlp, adamw1, unit)) == expected);
}

TEST_CASE("comparison_table and comparison_csv: one row per configuration", "[report]") {
  // tiny: 64 MiB with the default 500 MB context: total 500,000,000 + 8,519,680 + 1,176 + 2,796
  // + 397 = 508,524,049 > 67,108,864.
  const std::vector<labelled_budget> rows = {
      {"mlp", budget_totals(mlp, adamw1, unit)},
      {"mlp small card", budget_totals(mlp, adamw1, custom_device("tiny", 64 * MiB))},
  };
  const std::string t = comparison_table(rows);
  CHECK_THAT(t, Contains("| Configuration | Device | Params + optimizer | Activations (peak) | Live tensors (peak) |"));
  // params + master + optimizer = 232 + 0 + 464 = 696 B
  CHECK_THAT(t, Contains("| mlp | unit | 696 B | 232 B |"));
  CHECK_THAT(t, Contains("| 103.50 MiB | 1.00 GiB | 920.50 MiB | yes |\n"));
  CHECK_THAT(t, Contains("| mlp small card | tiny | 696 B | 232 B |"));
  CHECK_THAT(t, Contains("| **no** |\n"));

  const std::string c = comparison_csv(rows);
  CHECK_THAT(c, Contains("configuration,device,params_optimizer,activations_peak,live_tensors_peak,device_total,capacity,fits\n"));
  CHECK_THAT(c, Contains("mlp,unit,696,232,1176,108524049,1073741824,yes\n"));
  CHECK_THAT(c, Contains("mlp small card,tiny,696,232,1176,508524049,67108864,no\n"));
}

TEST_CASE("layer_table: top-level blocks with output, parameters and saved bytes", "[report]") {
  // linear1 saves the data (16 B), relu its output (32 B), linear2 nothing new.
  const std::string expected =
      "| # | Block | Output | Params (trainable) | Grad + optimizer | Saved for backward |\n"
      "|---:|---|---|---:|---:|---:|\n"
      "| 0 | input | [4] | 0 (0) | 0 B | 0 B |\n"
      // AdamW, fp32: each trainable parameter keeps a 4 B gradient and 2 x 4 B of state = 12 B
      "| 1 | linear | [8] | 40 (40) | 480 B | 16 B |\n"
      "| 2 | activation | [8] | 0 (0) | 0 B | 32 B |\n"
      "| 3 | linear | [2] | 18 (18) | 216 B | 0 B |\n";
  REQUIRE(layer_table(budget(mlp, adamw1, unit)) == expected);

  // Names and repeats: the stem saves the data (32 B); the repeat's first linear saves the stem
  // output (32 B) and each of the 3 relus its output (32 B): 128 B; 3 × 72 parameters, each
  // keeping 12 B of gradient + AdamW state: 864 B for the stem, 2,592 B = 2.53 KiB for the repeat.
  const std::string t =
      layer_table(budget(sequential(input(8), named("stem", linear(8)), repeat<3>(linear(8), relu())), adamw1, unit));
  CHECK_THAT(t, Contains("| 1 | stem | [8] | 72 (72) | 864 B | 32 B |\n"));
  CHECK_THAT(t, Contains("| 2 | repeat x3 | [8] | 216 (216) | 2.53 KiB | 128 B |\n"));
}
