// Sizes of the buffers that blow up in the seed reports, by hand: attention score matrices,
// ViT patch tokens and F.unfold (im2col) buffers.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

// --- patch tokens: (H/p)·(W/p) (+1 class token) -----------------------------------------------
static_assert(patch_tokens(224, 224, 16, true) == 197);
static_assert(patch_tokens(224, 224, 16, false) == 196);
static_assert(patch_tokens(448, 448, 16, true) == 785);  // seed 001
static_assert(patch_tokens(224, 224, 14, false) == 256);
static_assert(patch_tokens(384, 384, 32, true) == 145);

// --- score matrix [B, heads, Lq, Lk] -----------------------------------------------------------
// Seed 001: 785 query tokens against the 2·785 = 1570 keys of a pair, 12 heads, B = 8, fp32:
// 473,260,800 B, "about 470 MB".
static_assert(score_matrix_bytes(8, 12, 785, 1570, dtype::fp32) == std::int64_t{8} * 12 * 785 * 1570 * 4);
static_assert(score_matrix_bytes(8, 12, 785, 1570, dtype::fp32) == 473260800);
static_assert(score_matrix_bytes(8, 12, 785, 1570, dtype::bf16) == 473260800 / 2);
// Quadratic in the sequence: twice the tokens, four times the bytes.
static_assert(score_matrix_bytes(1, 12, 2048, 2048, dtype::fp16) == 4 * score_matrix_bytes(1, 12, 1024, 1024, dtype::fp16));

// The materialized path saves the fp32 softmax output, so seed 001's cross-attention layer saves
// at least one full score matrix; the flash path keeps no score matrix at all.
constexpr auto cross = sequential(input(785, 768), attention(768, heads(12), kv_tokens(1570)));
constexpr auto cross_b = budget(cross, training{.batch = 8}, devices::v100_32gb);
static_assert(cross_b.per_record[2].saved_bytes >= score_matrix_bytes(8, 12, 785, 1570, dtype::fp32));
static_assert(cross_b.per_record[2].output == make_shape(785, 768));
constexpr auto cross_flash = sequential(input(785, 768), attention(768, heads(12), kv_tokens(1570), attention_impl::flash));
constexpr auto flash_b = budget(cross_flash, training{.batch = 8}, devices::v100_32gb);
static_assert(flash_b.per_record[2].saved_bytes < score_matrix_bytes(8, 12, 785, 1570, dtype::fp32));
static_assert(flash_b.saved_activations < cross_b.saved_activations);

// --- F.unfold on [B, C, H, W]: B·C·k²·L elements, L output positions ---------------------------
static_assert(unfold_bytes(8, 64, 7, 56 * 56, dtype::fp32) == std::int64_t{8} * 64 * 49 * 3136 * 4);
static_assert(unfold_bytes(1, 3, 16, 14 * 14, dtype::fp32) == 3 * 256 * 196 * 4);
// k² growth: a 7×7 unfold is 49 times its input.
static_assert(unfold_bytes(2, 64, 7, 56 * 56, dtype::fp16) == 49 * bytes_of(2 * 64 * 56 * 56, dtype::fp16));

// unfold as a layer: [64, 56, 56] with k = 3, padding 1 → [64·9, 56·56].
constexpr auto unf = budget(sequential(input(64, 56, 56), unfold(3, padding(1))), training{.batch = 8}, devices::t4);
static_assert(unf.per_record[2].output == make_shape(576, 3136));
static_assert(unf.per_record[2].output_bytes == unfold_bytes(8, 64, 3, 3136, dtype::fp32));
// Strided, unpadded: (56 − 4)/4 + 1 = 14 per side.
constexpr auto unf2 = budget(sequential(input(32, 56, 56), unfold(4, padding(0), stride(4))), training{.batch = 1}, devices::t4);
static_assert(unf2.per_record[2].output == make_shape(32 * 16, 14 * 14));

// --- upsampling: nearest and bilinear keep nothing for backward (op_rules.md U1) --------------
// A U-Net decoder step: [64, 28, 28] -> x2 -> [64, 56, 56]; bilinear by (2, 4) -> [64, 112, 224].
constexpr auto up = budget(sequential(input(64, 28, 28), conv2d(64, 3, padding(1)), upsample(2), upsample(2, 4, upsample_mode::bilinear)),
                           training{.batch = 4}, devices::t4);
static_assert(up.per_record[3].output == make_shape(64, 56, 56));
static_assert(up.per_record[3].output_bytes == bytes_of(4 * 64 * 56 * 56, dtype::fp32));
static_assert(up.per_record[3].saved_bytes == 0 && up.per_record[4].saved_bytes == 0);
static_assert(up.per_record[4].output == make_shape(64, 112, 224));
constexpr auto up_model = sequential(input(64, 28, 28), upsample(2), upsample(2, 4, upsample_mode::bilinear));
static_assert(forward_flops(up_model.records[3], make_shape(64, 56, 56), make_shape(64, 112, 224)) == 2 * 4 * 64 * 112 * 224);  // four taps
static_assert(forward_flops(up_model.records[2], make_shape(64, 28, 28), make_shape(64, 56, 56)) == 0);  // nearest copies
// resize: F.interpolate(x, size=(31, 31)) of a [16, 30, 30] up step to its skip's odd size, the
// same kernel: its output only, nothing kept
constexpr auto rs = budget(sequential(input(32, 15, 15), conv_transpose2d(16, 2, stride(2)), resize(31, 31, upsample_mode::bilinear)),
                           training{.batch = 2}, devices::t4);
static_assert(rs.per_record[3].output == make_shape(16, 31, 31) && rs.per_record[3].saved_bytes == 0);
static_assert(rs.per_record[3].output_bytes == bytes_of(2 * 16 * 31 * 31, dtype::fp32));

// --- mish and softplus keep their input; softplus is on CUDA autocast's fp32 list -------------
constexpr auto acts = sequential(input(256), linear(256), mish(), linear(256), softplus());
constexpr auto acts_fp32 = budget(acts, training{.batch = 4}, devices::t4);
static_assert(acts_fp32.per_record[3].saved_bytes == bytes_of(4 * 256, dtype::fp32));
static_assert(acts_fp32.per_record[5].saved_bytes == bytes_of(4 * 256, dtype::fp32));
constexpr auto acts_amp = budget(acts, training{.batch = 4, .precision = precision_mode::amp_fp16}, devices::t4);
static_assert(acts_amp.per_record[3].saved_bytes == bytes_of(4 * 256, dtype::fp16));  // mish stays 16-bit
static_assert(acts_amp.per_record[5].saved_bytes == bytes_of(4 * 256, dtype::fp32));  // softplus: the fp32 copy

// --- PReLU keeps its input and trains a weight per channel; PixelShuffle keeps nothing -------
constexpr auto sr = sequential(input(3, 32, 32), conv2d(48, 3, padding(1)), prelu(48), conv2d(12, 3, padding(1)), pixel_shuffle(2));
constexpr auto sr_b = budget(sr, training{.batch = 2}, devices::t4);
static_assert(sr_b.per_record[3].saved_bytes == bytes_of(2 * 48 * 32 * 32, dtype::fp32));
static_assert(sr_b.per_record[5].output == make_shape(3, 64, 64) && sr_b.per_record[5].saved_bytes == 0);
static_assert(budget_totals(sr, training{.batch = 2}, devices::t4).parameter_count == (3 * 9 * 48 + 48) + 48 + (48 * 9 * 12 + 12));
static_assert(budget_totals(sequential(input(3, 8, 8), conv2d(8, 1), prelu()), training{.batch = 1}, devices::t4).parameter_count == 3 * 8 + 8 + 1);

// --- pooling and views ---------------------------------------------------------------------------
constexpr auto pool = budget(sequential(input(64, 112, 112), max_pool2d(3, stride(2), padding(1)), avg_pool2d(2),
                                        adaptive_avg_pool2d(1, 1), flatten()),
                             training{.batch = 1}, devices::t4);
static_assert(pool.per_record[2].output == make_shape(64, 56, 56));
static_assert(pool.per_record[3].output == make_shape(64, 28, 28));
static_assert(pool.per_record[4].output == make_shape(64, 1, 1));
static_assert(pool.per_record[5].output == make_shape(64));
constexpr auto views = budget(sequential(input(768, 14, 14), flatten(1), transpose(0, 1), reshape(14, 14, 768), mean_over(2)),
                              training{.batch = 1}, devices::t4);
static_assert(views.per_record[2].output == make_shape(768, 196));
static_assert(views.per_record[3].output == make_shape(196, 768));
static_assert(views.per_record[4].output == make_shape(14, 14, 768));
static_assert(views.per_record[5].output == make_shape(14, 14));
}  // namespace
