// A diffusion model's U-Net with its timestep input, forward(x, t), budgeted at compile time.
//
// The "diffusion models from scratch in PyTorch" notebook (DeepFindr, 2022; copied into many
// tutorials) trains a SimpleUnet on 64x64 images, batch 128, Adam: the step t goes through
// sinusoidal features, a Linear and a ReLU once, and every block adds its own projection of it to
// its feature map, `h + relu(time_mlp(t))[(...,) + (None,) * 2]`. The timestep branch is tiny;
// what it changes is the graph: one tensor read by eight blocks, whose gradient sums theirs.
//
//     conditioned(condition block, model)    the condition runs first from its own input; its
//                                            output stays alive while the model runs
//     condition()                            a branch that starts from it
//     parallel(merge_kind::add, sequential(), sequential(condition(), linear(C), relu(), reshape(C, 1, 1)))
//                                            h + time_emb broadcast over H x W
//
// gpubudget-export writes the same for `forward(x, t)` with `--condition timesteps:N`; measured on
// PyTorch 2.6's CPU step (tests/export, simple_unet_b2_64: the notebook's model at channels 32-256),
// saved bytes exact, peaks +1.54 %. The sinusoidal features are data (no gradient reaches them):
// input(32) stands for them.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr std::int64_t time_dim = 32;
constexpr auto time_embedding = sequential(input(time_dim), linear(time_dim), relu());

constexpr auto add_time(std::int64_t channels) {
  return parallel(merge_kind::add, sequential(), sequential(condition(time_dim), linear(channels), relu(), reshape(channels, 1, 1)));
}
/// The notebook's Block: conv, relu, batch norm, + time, conv, relu, batch norm, then a stride-2
/// conv down or a ConvTranspose2d up.
constexpr auto down(std::int64_t channels) {
  return sequential(conv2d(channels, 3, padding(1)), relu(), batch_norm(), add_time(channels), conv2d(channels, 3, padding(1)), relu(),
                    batch_norm(), conv2d(channels, 4, stride(2), padding(1)));
}
constexpr auto up(std::int64_t channels) {
  return sequential(conv2d(channels, 3, padding(1)), relu(), batch_norm(), add_time(channels), conv2d(channels, 3, padding(1)), relu(),
                    batch_norm(), conv_transpose2d(channels, 4, stride(2), padding(1)));
}
/// torch.cat((x, residual_x), dim=1): the deeper path, then the skip.
template <class... Parts>
constexpr auto with_skip(const Parts&... deeper) { return parallel(merge_kind::concat, sequential(deeper...), sequential()); }

// down channels 64-1024: after the last down block x is also the last skip, so the first up block
// concatenates x with itself
constexpr auto unet = sequential(
    input(3, 64, 64), conv2d(64, 3, padding(1)), down(128),
    with_skip(down(256), with_skip(down(512), with_skip(down(1024), with_skip(), up(512)), up(256)), up(128)), up(64), conv2d(3, 1));
constexpr auto simple_unet = conditioned(time_embedding, unet);

// sum(p.numel()) of the notebook's SimpleUnet() in PyTorch 2.6 (tests/export/custom_models.py's copy,
// counted by gpubudget-export)
static_assert(budget_totals(simple_unet, training{.batch = 1}, devices::t4).parameter_count == 62'438'883);

constexpr auto& gpu = devices::t4;  // Colab's
constexpr auto plan = training{.batch = 128, .optimizer = adam};
constexpr auto notebook = budget_totals(simple_unet, plan, gpu);
constexpr auto largest = max_micro_batch_of<simple_unet, plan, gpu>();
static_assert(largest >= 16);
constexpr auto amp = budget_totals(simple_unet, training{.batch = 128, .precision = precision_mode::amp_fp16, .optimizer = adam}, gpu);
}  // namespace

int main() {
  std::cout << "SimpleUnet (diffusion from scratch), 64x64, forward(x, t), Adam, on " << gpu.name << "\n\n";
  std::vector<labelled_budget> rows{{"batch 128, fp32 (the notebook)", notebook}, {"batch 128, AMP fp16", amp}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest fp32 micro-batch that fits: " << largest << (fits(notebook) ? "" : " (the notebook's 128 does not fit: accumulate gradients)") << "\n";
}
