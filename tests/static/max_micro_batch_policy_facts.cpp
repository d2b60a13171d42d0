// T4 has no bf16 arithmetic: these budgets say so (emulated_bf16), as a user on a T4 would.
// The batch solver across policies: anything that needs less memory per sample (inference,
// frozen weights, checkpointing, 16-bit activations) or a lower utilization target never gives
// a smaller batch than the plain configuration; a stricter utilization target never a larger one.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto blk = transformer_block(192, heads(3));
constexpr auto vit = sequential(input(3, 384, 384), patch_embedding(192, 16), blk, blk,
                                layer_norm(), select_token(0), linear(1000));
constexpr training plan{.batch = 1, .precision = amp_bf16, .emulated_bf16 = true};
constexpr batch_bounds upto_1k{1, 1024};

constexpr auto base = max_micro_batch(vit, plan, devices::t4, upto_1k);
static_assert(base > 1 && base < upto_1k.max);

// A utilization target below 100 % never gives a larger batch, and its answer is exact.
constexpr auto at_90 = max_micro_batch(vit, plan, devices::t4, upto_1k, 90);
static_assert(at_90 <= base);
static_assert(fits(budget_totals(vit, training{.batch = at_90, .precision = amp_bf16, .emulated_bf16 = true}, devices::t4), 90));
static_assert(!fits(budget_totals(vit, training{.batch = at_90 + 1, .precision = amp_bf16, .emulated_bf16 = true}, devices::t4), 90));

// Each block checkpointed: a larger batch.
constexpr auto vit_ckpt = sequential(input(3, 384, 384), patch_embedding(192, 16), checkpointed(blk), checkpointed(blk),
                                     layer_norm(), select_token(0), linear(1000));
static_assert(max_micro_batch(vit_ckpt, plan, devices::t4, upto_1k) > base);

// Inference (no saved activations, no gradients or optimizer state): no smaller.
constexpr auto inference = max_micro_batch(vit, training{.batch = 1, .precision = amp_bf16, .inference = true, .emulated_bf16 = true}, devices::t4, upto_1k);
static_assert(inference >= base);

// Every parameter frozen (no gradients, no optimizer state): no smaller.
constexpr auto frozen_all = max_micro_batch(vit, training{.batch = 1, .precision = amp_bf16, .freeze_all = true, .emulated_bf16 = true}, devices::t4, upto_1k);
static_assert(frozen_all >= base);

// fp32 activations never beat bf16 autocast.
constexpr auto fp32_batch = max_micro_batch(vit, training{.batch = 1}, devices::t4, upto_1k);
static_assert(fp32_batch <= base);
}  // namespace
