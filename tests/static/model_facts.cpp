// Parameter counts of well-known models, which anyone can check against torchvision / timm /
// Hugging Face (`sum(p.numel() for p in model.parameters())`), plus the shapes between stages.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr training one{.batch = 1};

// --- torchvision resnet18: 11,689,512 parameters; 20 BatchNorms over 4800 channels in all -----
constexpr auto basic(std::int64_t c) {
  return sequential(residual(conv2d(c, 3, padding(1), no_bias), batch_norm(), relu(),
                             conv2d(c, 3, padding(1), no_bias), batch_norm()),
                    relu());
}
constexpr auto down(std::int64_t c) {
  return sequential(parallel(merge_kind::add,
                             sequential(conv2d(c, 3, stride(2), padding(1), no_bias), batch_norm(), relu(),
                                        conv2d(c, 3, padding(1), no_bias), batch_norm()),
                             sequential(conv2d(c, 1, stride(2), no_bias), batch_norm())),
                    relu());
}
constexpr auto stem = sequential(conv2d(64, 7, stride(2), padding(3), no_bias), batch_norm(), relu(),
                                 max_pool2d(3, stride(2), padding(1)));
constexpr auto resnet18 = sequential(input(3, 224, 224), stem, basic(64), basic(64), down(128), basic(128),
                                     down(256), basic(256), down(512), basic(512),
                                     adaptive_avg_pool2d(1, 1), flatten(), linear(1000));
constexpr auto rn = budget(resnet18, one, devices::v100_16gb);
static_assert(rn.parameter_count == 11689512);
static_assert(rn.trainable_count == 11689512);
static_assert(rn.buffers == 2 * 4800 * 4 + 20 * 8);  // running mean/var fp32 + num_batches_tracked
static_assert(rn.parameters == 11689512 * 4);
static_assert(rn.gradients == 11689512 * 4);                // every .grad alive at step()
static_assert(rn.optimizer_state == 2 * 11689512 * 4);      // AdamW: exp_avg + exp_avg_sq

// Shapes between stages: [0] model, [1] input, [2] stem (its 4 layers follow), [7] layer1.0.
static_assert(rn.per_record[2].output == make_shape(64, 56, 56));
static_assert(rn.per_record[7].output == make_shape(64, 56, 56));
static_assert(rn.per_record[rn.records.size() - 1].output == make_shape(1000));

// SGD with momentum keeps one copy; plain SGD none; frozen parameters need neither.
static_assert(budget_totals(resnet18, training{.batch = 1, .optimizer = sgd_momentum}, devices::v100_16gb).optimizer_state == 11689512 * 4);
static_assert(budget_totals(resnet18, training{.batch = 1, .optimizer = sgd}, devices::v100_16gb).optimizer_state == 0);

// --- torchvision vit_b_16: 86,567,656 parameters ------------------------------------------------
// patch conv 3·768·16² + 768, class token 768, positions 197·768, 12 × 7,087,872, final
// LayerNorm 1536, head 768·1000 + 1000.
constexpr auto vit_b16 = sequential(input(3, 224, 224), patch_embedding(768, 16),
                                    repeat<12>(transformer_block(768, heads(12))),
                                    layer_norm(), select_token(0), linear(1000));
constexpr auto vit = budget(vit_b16, one, devices::v100_16gb);
static_assert(vit.parameter_count == 86567656);
static_assert(vit.per_record[2].parameter_count == 3 * 768 * 256 + 768 + 768 + 197 * 768);
static_assert(vit.per_record[2].output == make_shape(197, 768));
static_assert(vit.per_record[3].parameter_count == 12 * 7087872);  // the repeat record covers every copy
static_assert(vit.per_record[vit.records.size() - 1].output == make_shape(1000));

// Mixed precision keeps fp32 parameters; pure bf16 stores them in 2 bytes plus fp32 masters.
constexpr auto vit_pure = budget_totals(vit_b16, training{.batch = 1, .precision = pure_bf16}, devices::a100_80gb);
static_assert(vit_pure.parameters == 86567656 * 2);
static_assert(vit_pure.master_weights == 86567656 * 4);
constexpr auto vit_amp = budget_totals(vit_b16, training{.batch = 1, .precision = amp_bf16}, devices::a100_80gb);
static_assert(vit_amp.parameters == 86567656 * 4);
static_assert(vit_amp.master_weights == 0);

// Frozen backbone: only the head trains (linear probe).
constexpr auto probe = sequential(input(3, 224, 224),
                                  frozen(patch_embedding(768, 16), repeat<12>(transformer_block(768, heads(12))), layer_norm()),
                                  select_token(0), linear(1000));
constexpr auto vit_probe = budget_totals(probe, one, devices::v100_16gb);
static_assert(vit_probe.parameter_count == 86567656);
static_assert(vit_probe.trainable_count == 768 * 1000 + 1000);
static_assert(vit_probe.optimizer_state == 2 * (768 * 1000 + 1000) * 4);

// continue_sequence copies of several modules (numbered_from(k, repeat(n, block), m)) are modules of
// the caller's nn.Sequential (locuslab/TCN's [conv, Chomp1d, ReLU, Dropout] runs): in a no-grad
// walk each copy's input lives no longer than its first module, as written out (2 activations at
// once); a nested repeat (no continue_sequence: an nn.Sequential of nested blocks) holds its input
// through every copy, and each copy its own: 4
constexpr training no_grad = [] {
  training t{.batch = 2};
  t.inference = true;
  return t;
}();
constexpr auto two_convs = sequential(conv1d(32, 1), conv1d(32, 1));
constexpr auto convs_written = sequential(input(32, 2000), conv1d(32, 1), conv1d(32, 1), conv1d(32, 1), conv1d(32, 1), conv1d(32, 1));
constexpr auto convs_folded = sequential(input(32, 2000), conv1d(32, 1), continue_sequence(numbered_from(1, repeat<2>(two_convs), 2)));
constexpr auto convs_nested = sequential(input(32, 2000), conv1d(32, 1), repeat<2>(two_convs));
constexpr std::int64_t conv_activation = 2 * 32 * 2000 * 4;
static_assert(budget_totals(convs_folded, no_grad, devices::t4).forward_peak == budget_totals(convs_written, no_grad, devices::t4).forward_peak);
static_assert(budget_totals(convs_folded, no_grad, devices::t4).forward_peak == 2 * conv_activation);
static_assert(budget_totals(convs_nested, no_grad, devices::t4).forward_peak == 4 * conv_activation);
// training: each conv keeps its input anyway, the same step either way
static_assert(budget_totals(convs_folded, one, devices::t4).fwd_bwd_peak == budget_totals(convs_written, one, devices::t4).fwd_bwd_peak);
}  // namespace
