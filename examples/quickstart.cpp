// Quick start: describe a model as a constexpr layer graph, budget it for a training policy on
// a GPU, check it at compile time, print the tables.
#include <gpubudget/gpubudget.hpp>

#include <iostream>

using namespace gpubudget;

// A hybrid: a conv stem that turns a 224×224 image into 196 tokens of width 768, then 12
// pre-norm transformer blocks (each with its own weights), a head on the mean token.
constexpr auto net = sequential(
    input(3, 224, 224),
    conv2d(64, 7, stride(2), padding(3)), batch_norm(), relu(),  // [64, 112, 112]
    conv2d(768, 8, stride(8)),                                   // [768, 14, 14]
    flatten(1), transpose(0, 1),                                 // [196, 768]
    repeat<12>(transformer_block(768, heads(12))),
    layer_norm(), mean_over(0), linear(1000));

constexpr auto plan = training{.batch = 32, .micro_batch = 8, .precision = amp_fp16, .optimizer = adamw};
constexpr auto b = budget(net, plan, devices::v100_16gb);

// Fails the build if the configuration stops fitting; the diagnostic shows needed and
// available MiB and the device.
static_assert(require_fits<b>);
// Micro-batch 8 with accumulation 4 keeps the effective batch at 32.
static_assert(b.plan.accumulation_steps() == 4);

// The largest micro-batch that fits, found at compile time.
constexpr auto largest = max_micro_batch(net, plan, devices::v100_16gb, {1, 512});
static_assert(largest >= 8);

int main() {
  std::cout << markdown_table(b) << "\n" << layer_table(b) << "\n";
  std::cout << "Largest micro-batch on " << devices::v100_16gb.name << ": " << largest << "\n\n";
  std::vector<labelled_budget> rows;
  for (const auto& dev : devices::all) rows.push_back({"micro 8, AMP fp16", budget_totals(net, plan, dev)});
  std::cout << comparison_table(rows);
}
