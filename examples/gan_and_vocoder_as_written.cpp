// Two models as their repositories write them, budgeted for a 16 GB T4 at compile time:
//
//  * SAGAN's discriminator (heykkro/pytorch-self-attention-GAN, sagan_models.py): four strided
//    convolutions with two `Self_Attn` blocks, whose attention map is `torch.bmm` of two 1×1
//    convolution outputs, `softmax`, then `torch.bmm(proj_value, attention.permute(0, 2, 1))`
//    and `self.gamma * out + x` with a learned scalar gamma. The products of two activations are
//    parallel(merge_kind::matmul, a, b); gamma is scalar_gain().
//  * HiFi-GAN's generator V1 (jik876/hifi-gan, config_v1.json: upsample_initial_channel 512,
//    upsample rates 8, 8, 2, 2, kernels 16, 16, 4, 4, ResBlock1 kernels 3, 7, 11 with dilations
//    1, 3, 5; segment_size 8192 samples = 32 mel frames, batch 16), every convolution under
//    torch.nn.utils.weight_norm: the `weight_norm` option (the weight recomputed from g and v
//    every forward, the last one kept on the module). Its three resblocks on one input are summed
//    in place (`xs += resblock(x)`), then divided by their count: a scale.
//
// `gpubudget-export` writes both descriptions from the PyTorch modules themselves (tests/export:
// `sagan_discriminator`, `hifigan_generator`, measured on PyTorch 2.6's CPU step: saved bytes
// exact, peaks -0.58 % and -0.05 %); here they are written by hand, as a user would.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
// --- SAGAN: Self_Attn(C) on [C, S, S] ----------------------------------------------------------
constexpr auto self_attention(std::int64_t c, std::int64_t side) {
  const std::int64_t n = side * side;
  const auto query = sequential(conv2d(c / 8, 1), reshape(c / 8, n), permute(1, 0));  // [N, C/8]
  const auto key = sequential(conv2d(c / 8, 1), reshape(c / 8, n));                    // [C/8, N]
  const auto value = sequential(conv2d(c, 1), reshape(c, n));                          // [C, N]
  const auto attention = sequential(parallel(merge_kind::matmul, query, key), softmax(), permute(1, 0));
  return residual(parallel(merge_kind::matmul, value, attention), reshape(c, side, side), scalar_gain());
}

constexpr std::int64_t image = 64, conv_dim = 64;
constexpr auto down(std::int64_t c) { return sequential(conv2d(c, 4, stride(2), padding(1)), leaky_relu()); }
constexpr auto sagan_d = sequential(input(3, image, image), down(conv_dim), down(2 * conv_dim), down(4 * conv_dim),
                                    self_attention(4 * conv_dim, image / 8), down(8 * conv_dim), self_attention(8 * conv_dim, image / 16),
                                    conv2d(1, 4));

// --- HiFi-GAN V1: ResBlock1(ch, k) and the generator ----------------------------------------------
constexpr auto dilated(std::int64_t ch, std::int64_t k, std::int64_t d) {
  return residual(leaky_relu(), conv1d(ch, k, dilation(d), padding(d * (k - 1) / 2), weight_norm), leaky_relu(),
                  conv1d(ch, k, padding((k - 1) / 2), weight_norm));
}
constexpr auto resblock(std::int64_t ch, std::int64_t k) { return sequential(dilated(ch, k, 1), dilated(ch, k, 3), dilated(ch, k, 5)); }
/// One upsampling stage: leaky ReLU, the transposed convolution, the three resblocks summed, / 3.
constexpr auto stage(std::int64_t ch, std::int64_t rate, std::int64_t kernel) {
  return sequential(leaky_relu(), conv_transpose1d(ch, kernel, stride(rate), padding((kernel - rate) / 2), weight_norm),
                    parallel(merge_kind::add_inplace, resblock(ch, 3), resblock(ch, 7), resblock(ch, 11)), scale());
}
constexpr std::int64_t mel_bins = 80, frames = 32;  // segment_size 8192 / hop 256
constexpr auto hifigan_v1 = sequential(input(mel_bins, frames), conv1d(512, 7, padding(3), weight_norm), stage(256, 8, 16),
                                       stage(128, 8, 16), stage(64, 2, 4), stage(32, 2, 4), leaky_relu(),
                                       conv1d(1, 7, padding(3), weight_norm), tanh());

constexpr auto& gpu = devices::t4;
constexpr auto d_plan = training{.batch = 64};
constexpr auto g_plan = training{.batch = 16};  // config_v1.json's batch_size
constexpr auto d_budget = budget(sagan_d, d_plan, gpu);
constexpr auto g_budget = budget(hifigan_v1, g_plan, gpu);

// HiFi-GAN V1's generator: 13,936,130 parameters, g of every weight-normed convolution included
// (sum(p.numel()) of jik876/hifi-gan's Generator at config_v1's sizes, PyTorch 2.6; the paper's
// Table 1 rounds it to 13.92 M); the 8192 samples come out as [1, 8192].
static_assert(g_budget.parameter_count == 13'936'130);
static_assert(g_budget.per_record[g_budget.per_record.size() - 1].output == make_shape(1, 8192));
static_assert(require_fits<d_budget>);
static_assert(require_fits<g_budget>);
constexpr auto g_largest = max_micro_batch_of<hifigan_v1, g_plan, gpu>();
static_assert(g_largest >= 16);
}  // namespace

int main() {
  std::cout << "SAGAN discriminator, " << image << "x" << image << ", batch " << d_plan.batch << "\n\n" << markdown_table(d_budget) << "\n";
  std::cout << "HiFi-GAN V1 generator, 8192 samples, batch " << g_plan.batch << "\n\n" << markdown_table(g_budget) << "\n";
  std::cout << "Largest HiFi-GAN V1 micro-batch on " << gpu.name << ": " << g_largest << "\n\n";
  std::vector<labelled_budget> rows;
  for (const auto& dev : devices::all) rows.push_back({"HiFi-GAN V1 G, batch 16", budget_totals(hifigan_v1, g_plan, dev)});
  std::cout << comparison_table(rows);
}
