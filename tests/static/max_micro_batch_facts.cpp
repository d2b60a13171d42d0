// The batch solver on devices: its answer fits and one more sample does not; a bigger GPU
// never gives a smaller batch; degenerate bounds behave. (Policies: max_micro_batch_policy_facts.cpp.)
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>

namespace {
using namespace gpubudget;

// A ViT-Ti/16-sized encoder at 384²: cheap to solve (repeat<4> simulates three blocks).
// One solve per constant: Clang 14 counts constexpr steps per full-expression.
constexpr auto vit_ti = sequential(input(3, 384, 384), patch_embedding(192, 16),
                                   repeat<4>(transformer_block(192, heads(3))),
                                   layer_norm(), select_token(0), linear(1000));
constexpr training plan{.batch = 1, .precision = amp_bf16, .emulated_bf16 = true};  // T4, V100: no bf16 arithmetic
constexpr batch_bounds upto_512{1, 512};

template <std::size_t N>
constexpr bool fits_at(const model<N>& m, training p, const device& d, std::int64_t mb) {
  p.batch = mb;
  return fits(budget_totals(m, p, d));
}

// Exact: the answer fits, the next size does not.
constexpr auto on_t4 = max_micro_batch(vit_ti, plan, devices::t4, upto_512);
static_assert(on_t4 > 1 && on_t4 < upto_512.max);
static_assert(fits_at(vit_ti, plan, devices::t4, on_t4));
static_assert(!fits_at(vit_ti, plan, devices::t4, on_t4 + 1));

// A bigger GPU (same workspace figures) never gives a smaller batch.
static_assert(devices::t4.capacity < devices::v100_16gb.capacity);
constexpr auto on_v100 = max_micro_batch(vit_ti, plan, devices::v100_16gb, upto_512);
static_assert(on_t4 <= on_v100);
// The same card with more capacity, everything else equal: strictly more here.
constexpr auto on_8gb = max_micro_batch(vit_ti, plan, custom_device("8 GB", 8 * GB), upto_512);
constexpr auto on_12gb = max_micro_batch(vit_ti, plan, custom_device("12 GB", 12 * GB), upto_512);
static_assert(0 < on_8gb && on_8gb < on_12gb);

// Bounds: the upper bound when everything fits, 0 when nothing does (200 MB < the 500 MB
// CUDA context), and an upper bound below the answer is returned as is.
static_assert(max_micro_batch(vit_ti, plan, devices::h200, {1, 4}) == 4);
static_assert(max_micro_batch(vit_ti, plan, custom_device("tiny", 200 * MB), upto_512) == 0);
static_assert(max_micro_batch(vit_ti, plan, devices::t4, {1, on_t4 - 1}) == on_t4 - 1);

// The prediction from one traced step is exact on a CUDA plan (every batch-independent byte is
// known as such) and lands on the answer: one confirming budget settles it.
constexpr auto predicted = detail::estimate_micro_batch(vit_ti, plan, devices::t4, 7, 100);
static_assert(predicted.exact && predicted.largest == on_t4);
static_assert(detail::settled_above(predicted, plan, on_t4));
// The same on a CNN whose 3x3 weight gradients reach cuDNN's split-K cap (conv.hpp, CV2): a
// capped workspace is batch-independent, not extrapolated per sample (the estimate said 482 of
// 508 while it was, and the search took five more budgets).
constexpr auto resnet18_224 = models::resnet18(224, 1000);
constexpr training fp32_plan{.batch = 8};
constexpr auto cnn_answer = max_micro_batch(resnet18_224, fp32_plan, devices::v100_16gb);
constexpr auto cnn_predicted = detail::estimate_micro_batch(resnet18_224, fp32_plan, devices::v100_16gb, 7, 100);
static_assert(cnn_answer > 400 && cnn_predicted.largest == cnn_answer);
static_assert(detail::settled_above(cnn_predicted, fp32_plan, cnn_answer));
// With accumulation kept (batch 64 in micro-batches), the same answer as a search would give.
constexpr training accumulating{.batch = 64, .micro_batch = 8, .precision = amp_bf16, .emulated_bf16 = true};
constexpr auto acc = max_micro_batch(vit_ti, accumulating, devices::t4, upto_512);
static_assert(fits(budget_totals(vit_ti, detail::at_micro_batch(accumulating, acc), devices::t4)));
static_assert(!fits(budget_totals(vit_ti, detail::at_micro_batch(accumulating, acc + 1), devices::t4)));

// max_micro_batch_of: the same answers, every budget in a constant evaluation of its own.
static_assert(max_micro_batch_of<vit_ti, plan, devices::t4, upto_512>() == on_t4);
static_assert(max_micro_batch_of<vit_ti, plan, devices::h200, batch_bounds{1, 4}>() == 4);
static_assert(max_micro_batch_of<vit_ti, plan, devices::t4, batch_bounds{1, on_t4 - 1}>() == on_t4 - 1);
static_assert(max_micro_batch_of<vit_ti, plan, devices::t4, upto_512, 90>() == max_micro_batch(vit_ti, plan, devices::t4, upto_512, 90));
}  // namespace
