// timeline(): every moment of the same walk as budget(), so its invariants are the budget's own
// numbers — the highest moment is the budget's peak (bytes, record, gradients then alive), the
// categories add up at every moment, the phases run in the step's order — on configurations
// that exercise each path of the walk (plain, checkpointed, accumulated, frozen, teacher, a
// repeat's phantom, inference, the optimizer step as the peak, the CPU's host bookkeeping).
#include <catch2/catch.hpp>
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/seeds.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/svg.hpp>
#include <gpubudget/timeline.hpp>

#include <cstdint>
#include <string>

namespace {
using namespace gpubudget;

constexpr auto tiny = sequential(input(4), linear(8), relu(), linear(2));
constexpr device dev = custom_device("unit", 80 * GiB);

// Cheap enough for constant evaluation: the peak of a small net's timeline is its budget's
// (tests/fail/timeline_micro_batch_not_dividing_ko.cpp: a bad plan is named there).
static_assert([] {
  const auto t = timeline(tiny, training{.batch = 2}, dev);
  return t.points[t.peak_index()].total() == t.budget.peak_tensor_bytes();
}());
static_assert([] {
  const auto t = timeline(sequential(input(512), linear(256), relu(), linear(10)), training{.batch = 8, .micro_batch = 4}, devices::generic_16gb);
  return t.points[t.peak_index()].total() == t.budget.peak_tensor_bytes() && t.points.back().micro_batch == 1;
}());

template <std::size_t N>
void check_invariants(const model<N>& m, const training& plan, const device& d = dev) {
  const auto t = timeline(m, plan, d);
  const auto b = budget_totals(m, plan, d);
  REQUIRE(!t.points.empty());
  // the same configuration's budget
  CHECK(t.budget.peak_tensor_bytes() == b.peak_tensor_bytes());
  CHECK(t.budget.total() == b.total());
  // the highest moment is the budget's peak, at the budget's peak record, with its gradients
  const auto& peak = t.points[t.peak_index()];
  CHECK(peak.total() == b.peak_tensor_bytes());
  CHECK(peak.record == b.peak_record);
  CHECK(peak.gradients == b.gradients_at_peak);
  if (peak.phase == step_phase::forward || peak.phase == step_phase::backward) CHECK((peak.phase == step_phase::backward) == b.peak_in_backward);
  else CHECK(b.peak_record == -1);
  const auto resident = b.resident();
  auto phase = step_phase::teacher_forward;
  std::int32_t micro = 0;
  for (const auto& p : t.points) {
    CHECK(p.total() <= b.peak_tensor_bytes());
    // the categories: each non-negative, resident state constant, the sum the moment's total
    CHECK(p.gradients >= 0);
    CHECK(p.saved_activations >= 0);
    CHECK(p.other >= b.input_batch);
    CHECK(p.parameters + p.optimizer_state + b.input_batch == resident);
    CHECK(p.parameters + p.optimizer_state + p.gradients + p.saved_activations + p.other == p.total());
    CHECK(p.gradients <= b.gradients);
    // phases in order: teacher, then (forward, backward) per micro-batch, then step()
    const bool next_micro_batch = p.micro_batch == micro + 1 && p.phase == step_phase::forward && phase == step_phase::backward;
    CHECK((p.phase >= phase || next_micro_batch));
    CHECK((p.micro_batch == micro || next_micro_batch));
    phase = p.phase, micro = p.micro_batch;
    if (p.phase == step_phase::forward && p.micro_batch == 0) CHECK(p.gradients == 0);
    if (p.phase != step_phase::teacher_forward && p.phase != step_phase::optimizer_step) CHECK(p.record >= 0);
  }
  if (plan.inference) {
    CHECK(phase == step_phase::forward);
  } else {
    CHECK(phase == step_phase::optimizer_step);
    CHECK(micro == (plan.accumulation_steps() > 1 ? 1 : 0));
    CHECK(t.points.back().gradients == b.gradients);
  }
}

}  // namespace

TEST_CASE("timeline: the tiny net's peak, phases and categories") {
  check_invariants(tiny, training{.batch = 1, .optimizer = sgd});
  const auto t = timeline(tiny, training{.batch = 1, .optimizer = adamw}, dev);
  // parameters 58 fp32 = 232 B (test_peak_walk.cpp), Adam(W): two states each
  CHECK(t.points.front().parameters == 232);
  CHECK(t.points.front().optimizer_state == 464);
  // Saved for backward at the end of forward (test_peak_walk.cpp's tensors): relu's output y2
  // (32 B, also linear2's input) and out (8 B, kept by out ** 2) = 40 B. The data x (16 B),
  // saved by linear1, was allocated before the step: it is the input batch, not a saved byte.
  std::int64_t saved_in_forward = 0;
  for (const auto& p : t.points)
    if (p.phase == step_phase::forward && p.saved_activations > saved_in_forward) saved_in_forward = p.saved_activations;
  CHECK(t.budget.input_batch == 16);
  CHECK(saved_in_forward == 40);
  CHECK(t.points.back().saved_activations == 0);  // backward released every save
  CHECK(t.points.back().gradients == 232);        // every parameter's .grad
}

TEST_CASE("timeline: the optimizer step as the peak") {
  // Adam(W) foreach on a wide linear: 2 x every parameter's bytes of temporaries beat the walk
  constexpr auto wide = sequential(input(1024), linear(1024));
  const training plan{.batch = 1, .optimizer = adamw, .step = step_impl::foreach};
  check_invariants(wide, plan);
  const auto t = timeline(wide, plan, dev);
  CHECK(t.points[t.peak_index()].phase == step_phase::optimizer_step);
  CHECK(t.budget.peak_record == -1);
}

TEST_CASE("timeline: invariants across the walk's paths") {
  const auto net = models::resnet18(64, 10);
  check_invariants(net, training{.batch = 4});
  check_invariants(net, training{.batch = 4, .micro_batch = 2, .precision = amp_fp16});
  check_invariants(net, training{.batch = 4, .checkpoint_all = true});
  check_invariants(net, training{.batch = 2, .inference = true});
  check_invariants(net, training{.batch = 2, .train_only = "fc"});
  check_invariants(net, cpu_reference_step(2, adamw));  // host bookkeeping counted as "other"
  // a repeat stands in for its middle copies with one phantom record
  check_invariants(sequential(input(16, 32), repeat<8>(transformer_block(32, heads(4))), mean_over(0), linear(4)),
                   training{.batch = 2, .checkpoint_blocks = true});
  // a teacher's forward goes first
  training with_teacher{.batch = 2};
  with_teacher.teacher = teacher(models::resnet50(64, 10), 2, false);
  check_invariants(net, with_teacher);
}

TEST_CASE("timeline: the teacher's forward can be the peak") {
  training plan{.batch = 1};
  plan.teacher = teacher(models::resnet50(224, 1000), 64, true);  // a large offloaded teacher
  const auto t = timeline(tiny, plan, dev);
  CHECK(t.points.front().phase == step_phase::teacher_forward);
  CHECK(t.points[t.peak_index()].phase == step_phase::teacher_forward);
  CHECK(t.points[t.peak_index()].total() == t.budget.peak_tensor_bytes());
}

TEST_CASE("timeline: the seed models' peaks") {
  check_invariants(models::bev_local_attention(local_attention_impl::unfold), training{.batch = 1}, devices::v100_32gb);
  check_invariants(models::gat_graph(2000, 20000, 5000), training{.batch = 1});
}

TEST_CASE("timeline_svg: what the picture says") {
  const auto t = timeline(models::resnet18(64, 10), training{.batch = 8}, devices::t4);
  const auto svg = timeline_svg(t, "resnet18");
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("<script") == std::string::npos);
  for (const char* s : {"Parameters", "Optimizer state", "Gradients", "Saved activations", "forward", "backward", "optimizer.step()",
                        "T4 capacity 14.74 GiB", "peak ", "MiB"})
    CHECK(svg.find(s) != std::string::npos);
  // the peak's label names the budget's peak record
  CHECK(svg.find(record_label(t, t.budget.peak_record)) != std::string::npos);
  // text is escaped
  CHECK(timeline_svg(t, "a<b & c").find("a&lt;b &amp; c") != std::string::npos);
}
