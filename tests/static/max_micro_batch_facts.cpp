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

// The search itself (detail::batch_search) on excess functions of a known shape, so the
// budgets it asks can be counted: `excess(B)` in bytes·100, the traced slope `slope`.
template <class Excess>
constexpr std::int64_t search_steps(std::int64_t estimate, std::int64_t slope, Excess excess, std::int64_t& answer) {
  detail::batch_estimate e{};
  e.largest = estimate, e.slope = slope;
  auto s = detail::start_search(e, training{}, batch_bounds{});
  std::int64_t asked = 0;
  while (!s.done()) {
    const auto b = s.next_guess();
    s = s.after(b, excess(b)), ++asked;
  }
  answer = s.answer();
  return asked;
}
// Lines low by a regime change (a workspace past its cap): the true slope 1 % steeper, the
// answer 592 where the lines said 587 (vit_b_16, H100, fp32). The room left at 587 says 5 more
// samples: 587, 592, 593. (A bracket from the top asked 587, 588, 4096, 592, 2344, 593.)
constexpr std::int64_t slope = 1'000'000;
constexpr auto steeper = [](std::int64_t b) { return (b - 592) * (slope + slope / 100) - slope / 2; };
constexpr std::int64_t steeper_answer = [] { std::int64_t a = 0; search_steps(587, slope, steeper, a); return a; }();
static_assert(steeper_answer == 592);
static_assert([] { std::int64_t a = 0; return search_steps(587, slope, steeper, a); }() == 3);
// An estimate one over (swin_t, V100): back by the overshoot, 135 then 134 (not 135, 1, 134).
constexpr auto one_over = [](std::int64_t b) { return (b - 134) * slope - slope / 3; };
static_assert([] { std::int64_t a = 0; const auto n = search_steps(135, slope, one_over, a); return a == 134 && n == 2; }());
// A capped allocator decides, and where it gives no distance (-1 while it fits) the steps
// double (ResNet-50, V100, the lines said 171 and 183 runs): 171, 172, 174, 178, 186, then
// bisection 182, 184, 183. It ended at 171 before, trusting the lines.
constexpr auto capped = [](std::int64_t b) { return b <= 183 ? std::int64_t{-1} : (b - 183) * slope; };
static_assert([] { std::int64_t a = 0; const auto n = search_steps(171, slope, capped, a); return a == 183 && n == 8; }());
// With the room its blocks in use leave (micro_batch_excess since 2026-11-27: in use reach the
// cap at 190, fragmentation stops the run at 183): 171, 190 (a Newton step: +1 there, no room
// and no distance), then bisection 180, 185, 182, 183, 184.
constexpr auto in_use = [](std::int64_t b) {
  const auto e = (b - 190) * slope;
  return b <= 183 ? (e < 0 ? e : -1) : (e > 0 ? e : 1);
};
static_assert([] { std::int64_t a = 0; const auto n = search_steps(171, slope, in_use, a); return a == 183 && n == 7; }());
// Nothing fits, and the excess does not follow the slope: three Newton steps back, then
// doubling to min (50, 49, 48, 47, 45, 41, 33, 17, 1) and 0. Everything fits: up to max.
static_assert([] { std::int64_t a = -1; const auto n = search_steps(50, slope, [](std::int64_t) { return slope; }, a); return a == 0 && n == 9; }());
static_assert([] { std::int64_t a = -1; search_steps(50, slope, [](std::int64_t) { return -slope * 100000; }, a); return a; }() == 4096);

// With the caching allocator model the capped allocator decides, not the lines: it frees its cache
// and retries before an OOM, and cuDNN's optional workspaces give way, so it runs micro-batches the
// uncapped lines put over (here they say 95, and the search stopped there when they were exact).
constexpr auto small_cnn = sequential(input(3, 64, 64), conv2d(32, 3, padding(1)), batch_norm(), relu(), conv2d(64, 3, padding(1)),
                                      batch_norm(), relu(), conv2d(64, 3, padding(1), stride(2)), relu(), flatten(), linear(10));
constexpr training allocator_model{.batch = 8, .model_allocator = true};
constexpr device one_gib = custom_device("1 GiB", 1024 * MiB, 100 * MB);
constexpr auto capped_answer = max_micro_batch_of<small_cnn, allocator_model, one_gib>();
static_assert(capped_answer > detail::estimate_micro_batch(small_cnn, allocator_model, one_gib, 7, 100).largest);
static_assert(fits(budget_totals(small_cnn, detail::at_micro_batch(allocator_model, capped_answer), one_gib)));
static_assert(!fits(budget_totals(small_cnn, detail::at_micro_batch(allocator_model, capped_answer + 1), one_gib)));

// max_micro_batch_of: the same answers, every budget in a constant evaluation of its own.
static_assert(max_micro_batch_of<vit_ti, plan, devices::t4, upto_512>() == on_t4);
static_assert(max_micro_batch_of<vit_ti, plan, devices::h200, batch_bounds{1, 4}>() == 4);
static_assert(max_micro_batch_of<vit_ti, plan, devices::t4, batch_bounds{1, on_t4 - 1}>() == on_t4 - 1);
static_assert(max_micro_batch_of<vit_ti, plan, devices::t4, upto_512, 90>() == max_micro_batch(vit_ti, plan, devices::t4, upto_512, 90));
}  // namespace
