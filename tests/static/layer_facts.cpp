// Hand-checkable parameter counts and output shapes of single layers, read from
// budget(...).per_record[i] (records in pre-order: [0] is the sequential, [1] the input, [2] the layer).
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr training one{.batch = 1};
template <std::size_t N>
constexpr auto on_t4(const model<N>& m) { return budget(m, one, devices::t4); }

// --- conv2d: params = in·out/groups·k² (+ out bias); out = (in + 2p − d(k−1) − 1)/s + 1 ------
// ResNet stem: Conv2d(3, 64, 7, stride 2, padding 3) on 224² → 112².
constexpr auto stem = on_t4(sequential(input(3, 224, 224), conv2d(64, 7, stride(2), padding(3))));
static_assert(stem.per_record[2].parameter_count == 3 * 64 * 7 * 7 + 64);  // 9472
static_assert(stem.per_record[2].output == make_shape(64, 112, 112));
static_assert(stem.per_record[1].output == make_shape(3, 224, 224));
static_assert(stem.parameter_count == 9472);

// Without padding: (224 − 7)/2 + 1 = 109; without bias: 9408.
constexpr auto valid = on_t4(sequential(input(3, 224, 224), conv2d(64, 7, stride(2), no_bias)));
static_assert(valid.per_record[2].output == make_shape(64, 109, 109));
static_assert(valid.per_record[2].parameter_count == 3 * 64 * 7 * 7);

// Grouped: Conv2d(64, 128, 3, groups=4): 64·(128/4)·9 + 128.
constexpr auto grouped = on_t4(sequential(input(64, 32, 32), conv2d(128, 3, padding(1), groups(4))));
static_assert(grouped.per_record[2].parameter_count == 64 * 32 * 9 + 128);
static_assert(grouped.per_record[2].output == make_shape(128, 32, 32));

// Depthwise 7×7 (ConvNeXt): 96·1·49 + 96.
constexpr auto dw = on_t4(sequential(input(96, 56, 56), depthwise_conv2d(7, padding(3))));
static_assert(dw.per_record[2].parameter_count == 96 * 49 + 96);
static_assert(dw.per_record[2].output == make_shape(96, 56, 56));

// Dilation 2, kernel 3: effective 5, so 32 → 28.
constexpr auto dil = on_t4(sequential(input(4, 32, 32), conv2d(8, 3, dilation(2))));
static_assert(dil.per_record[2].output == make_shape(8, 28, 28));
static_assert(dil.per_record[2].parameter_count == 4 * 8 * 9 + 8);

// 1×1 projection with stride 2 (ResNet downsample): 56 → 28.
constexpr auto proj = on_t4(sequential(input(64, 56, 56), conv2d(128, 1, stride(2), no_bias)));
static_assert(proj.per_record[2].output == make_shape(128, 28, 28));
static_assert(proj.per_record[2].parameter_count == 64 * 128);

// Transposed: out = (in − 1)·s − 2p + (k − 1) + 1: 16 → 32; weight [in, out/groups, k, k].
constexpr auto up = on_t4(sequential(input(64, 16, 16), conv_transpose2d(32, 4, stride(2), padding(1))));
static_assert(up.per_record[2].output == make_shape(32, 32, 32));
static_assert(up.per_record[2].parameter_count == 64 * 32 * 16 + 32);

// conv1d and conv3d.
constexpr auto c1 = on_t4(sequential(input(64, 100), conv1d(128, 5, padding(2))));
static_assert(c1.per_record[2].output == make_shape(128, 100));
static_assert(c1.per_record[2].parameter_count == 64 * 128 * 5 + 128);
constexpr auto c3 = on_t4(sequential(input(8, 10, 10, 10), conv3d(16, 3)));
static_assert(c3.per_record[2].output == make_shape(16, 8, 8, 8));
static_assert(c3.per_record[2].parameter_count == 8 * 16 * 27 + 16);

// --- linear and embedding ---------------------------------------------------------------------
constexpr auto mlp = on_t4(sequential(input(1024), linear(4096), gelu(), linear(1024, no_bias)));
static_assert(mlp.per_record[2].parameter_count == 1024 * 4096 + 4096);
static_assert(mlp.per_record[2].output == make_shape(4096));
static_assert(mlp.per_record[4].parameter_count == 4096 * 1024);
static_assert(mlp.per_record[4].output == make_shape(1024));
static_assert(mlp.parameter_count == 8392704);
// Linear over the last dimension only: [197, 768] → [197, 3072].
constexpr auto tok = on_t4(sequential(input(197, 768), linear(3072)));
static_assert(tok.per_record[2].output == make_shape(197, 3072));

// GPT-2 token embedding: 50257 × 768 on 128 int64 ids.
constexpr auto emb = on_t4(sequential(tokens(128), embedding(50257, 768)));
static_assert(emb.per_record[2].parameter_count == 50257 * 768);
static_assert(emb.per_record[2].output == make_shape(128, 768));
static_assert(emb.input_batch == 128 * 8);  // int64 ids

// --- normalization: 2 per channel / feature; BatchNorm keeps 2·C fp32 + an int64 counter ------
constexpr auto bn = on_t4(sequential(input(64, 8, 8), batch_norm()));
static_assert(bn.per_record[2].parameter_count == 128);
static_assert(bn.buffers == 64 * 2 * 4 + 8);
constexpr auto ln = on_t4(sequential(input(197, 768), layer_norm()));
static_assert(ln.per_record[2].parameter_count == 2 * 768);
static_assert(ln.buffers == 0);
// nn.LayerNorm(bias=False) (nanoGPT's bias=False): the weight only, the same saved tensors, no
// bias gradient (measured: nanogpt_nobias_b2_t64, tests/export)
constexpr auto ln_nb = on_t4(sequential(input(197, 768), layer_norm(no_bias)));
static_assert(ln_nb.per_record[2].parameter_count == 768);
static_assert(ln_nb.saved_activations == ln.saved_activations);
static_assert(ln.gradients - ln_nb.gradients == 768 * 4);
constexpr auto gn = on_t4(sequential(input(64, 8, 8), group_norm(32)));
static_assert(gn.per_record[2].parameter_count == 128);

// --- attention: q, k, v and out projections, 4·(D² + D) like nn.MultiheadAttention ----------
constexpr auto mha = on_t4(sequential(input(197, 768), attention(768, heads(12))));
static_assert(mha.per_record[2].parameter_count == 4 * (768 * 768 + 768));  // 2362368
static_assert(mha.per_record[2].output == make_shape(197, 768));
// Grouped-query: 4 key/value heads of 64 → k and v project to 2·4·64 = 512.
constexpr auto gqa = on_t4(sequential(input(197, 768), attention(768, heads(12), kv_heads(4))));
static_assert(gqa.per_record[2].parameter_count == 2 * (768 * 768 + 768) + 768 * 512 + 512);
// Same parameters whatever the implementation.
constexpr auto fl = on_t4(sequential(input(197, 768), attention(768, heads(12), attention_impl::flash)));
static_assert(fl.per_record[2].parameter_count == mha.per_record[2].parameter_count);

// A ViT-B block: attention + 2 LayerNorms + MLP 768→3072→768 = 7,087,872 (timm / torchvision).
constexpr auto blk = on_t4(sequential(input(197, 768), transformer_block(768, heads(12))));
static_assert(blk.parameter_count == 7087872);

// nn.Conv2d(192, 128, (1, 7), padding=(0, 3)) and (7, 1), padding (3, 0), as Inception-v3's
// Mixed_6 blocks: 7 weights per filter position, the map's size kept (torchvision's
// inception_v3 exported: sum(p.numel()) exact, its CPU step's saved bytes exact, tests/export)
constexpr auto rect = on_t4(sequential(input(192, 17, 17), conv2d(128, 1, kernel_w(7), padding_w(3), no_bias),
                                       conv2d(192, 7, kernel_w(1), padding(3), padding_w(0), no_bias)));
static_assert(rect.per_record[2].parameter_count == 192 * 128 * 7 && rect.per_record[3].parameter_count == 128 * 192 * 7);
static_assert(rect.per_record[3].output_bytes == rect.per_record[1].output_bytes);  // [192, 17, 17] again
// kernel_w and padding_w equal to the square ones are the square convolution
static_assert(on_t4(sequential(input(8, 9, 9), conv2d(4, 3, padding(1), kernel_w(3), padding_w(1)))).per_record[2].output_bytes ==
              on_t4(sequential(input(8, 9, 9), conv2d(4, 3, padding(1)))).per_record[2].output_bytes);

// torchvision's r3d_18 stem, nn.Conv3d(3, 64, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3)), on an
// 8-frame 64² clip: [64, 8, 32, 32] and 3·64·3·7·7 weights; R(2+1)D's temporal (3, 1, 1) conv,
// stride (2, 1, 1), padding (1, 0, 0): [64, 4, 32, 32] (the exported video ResNets: sum(p.numel())
// and the CPU steps' saved bytes exact, tests/export)
constexpr auto clip = on_t4(sequential(input(3, 8, 64, 64), conv3d(64, 7, stride(2), padding(3), kernel_t(3), stride_t(1), padding_t(1), no_bias),
                                       conv3d(64, 1, kernel_t(3), stride_t(2), padding_t(1), no_bias)));
static_assert(clip.per_record[2].parameter_count == 3 * 64 * 3 * 7 * 7 && clip.per_record[3].parameter_count == 64 * 64 * 3);
static_assert(clip.per_record[2].output_bytes == 64 * 8 * 32 * 32 * 4);  // batch 1, fp32
static_assert(clip.per_record[3].output_bytes == 64 * 4 * 32 * 32 * 4);
// nn.MaxPool3d(2) halves every dimension of [C, D, H, W] and keeps int64 indices; nn.ConvTranspose3d(16,
// 8, 2, stride=2) doubles them back (the 3-D U-Net of tests/export); nn.ConvTranspose1d(32, 16, 4,
// stride=4): (1000 - 1)·4 + 4 = 4,000 samples
constexpr auto vol = on_t4(sequential(input(16, 8, 32, 32), conv3d(16, 1), max_pool3d(2), conv_transpose3d(8, 2, stride(2))));
static_assert(vol.per_record[3].output_bytes == 16 * 4 * 16 * 16 * 4 && vol.per_record[3].saved_bytes == 16 * 8 * 32 * 32 * 4 + 16 * 4 * 16 * 16 * 8);
static_assert(vol.per_record[4].output_bytes == 8 * 8 * 32 * 32 * 4 && vol.per_record[4].parameter_count == 16 * 8 * 8 + 8);
static_assert(on_t4(sequential(input(32, 1000), conv_transpose1d(16, 4, stride(4)))).per_record[2].output_bytes == 16 * 4000 * 4);
// S3D's nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)) keeps D and halves H, W (input and int64 indices
// kept); its nn.AvgPool3d((2, 7, 7), 1) on [C, 2, 7, 7]: one position, the input kept
constexpr auto s3d_pools = on_t4(sequential(input(8, 4, 14, 14), conv3d(8, 1), max_pool3d(3, stride(2), padding(1), kernel_t(1), stride_t(1), padding_t(0)),
                                            avg_pool3d(7, stride(1), padding(0), kernel_t(4), stride_t(1), padding_t(0))));
static_assert(s3d_pools.per_record[3].output_bytes == 8 * 4 * 7 * 7 * 4 && s3d_pools.per_record[3].saved_bytes == 8 * 4 * 14 * 14 * 4 + 8 * 4 * 7 * 7 * 8);
static_assert(s3d_pools.per_record[4].output_bytes == 8 * 1 * 1 * 1 * 4 && s3d_pools.per_record[4].saved_bytes == 8 * 4 * 7 * 7 * 4);
// nn.Upsample(scale_factor=2, mode="trilinear") on [C, D, H, W]: every dimension doubled, nothing kept
constexpr auto up3 = on_t4(sequential(input(4, 4, 8, 8), conv3d(4, 1), upsample3d(2, 2, 2, upsample_mode::trilinear)));
static_assert(up3.per_record[3].output_bytes == 4 * 8 * 16 * 16 * 4 && up3.per_record[3].saved_bytes == 0);
}  // namespace
