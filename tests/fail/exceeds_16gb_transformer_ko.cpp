// expect: model_exceeds_gpu_memory<[1-9][0-9][0-9][0-9][0-9], 15258,
// ViT-B/16-sized encoder (12 blocks, width 768, 197 tokens), fp32, AdamW, batch 128 on a nominal
// 16 GB card (16·10⁹ B = 15258 MiB): about 20 GB are needed, so `require_fits` must stop the
// build and print both numbers. The regex pins the available MiB (fixed by the device) and asks
// for a five-digit needed MiB; GCC 12 and Clang 14 both print `model_exceeds_gpu_memory<N, A, `.
// Twin: tests/static/exceeds_16gb_transformer_ok.cpp (batch 64 fits).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto encoder = sequential(input(197, 768), repeat<12>(transformer_block(768, heads(12))),
                                    layer_norm(), select_token(0), linear(1000));
constexpr auto b = budget(encoder, training{.batch = 128}, devices::generic_16gb);

static_assert(require_fits<b>);

int main() {}
