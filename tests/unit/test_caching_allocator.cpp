// The caching allocator model (detail/caching_allocator.hpp) replayed on every committed allocation
// trace (benchmarks/accuracy/reference/cuda-h100/, cuda-h200/ and cuda-h200/cuda-cases/*.json.gz, the
// capped `cap16_*` trials included), turned into tests/unit/data/allocator_traces.txt by
// benchmarks/gpu/trace_events.py: the same requests, frees, empty_cache() calls and cap, in the same
// order, must reserve what PyTorch reserved (max_memory_reserved), refuse the cuDNN workspaces the
// cap refused (cuDNN then tries another plan) and run out of memory at the request that raised
// torch.OutOfMemoryError, not before.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gpubudget/detail/caching_allocator.hpp>

using gpubudget::allocator_settings;
using gpubudget::detail::caching_allocator;

namespace {

struct trace {
  std::string name;
  std::int64_t reserved_peak = 0;
  std::vector<std::int64_t> segment_addresses;  // the trace's segment_alloc events, in order
  std::vector<std::string> events;              // trace_events.py's tokens
};

std::vector<trace> read_traces() {
  std::ifstream in(GPUBUDGET_ALLOCATOR_TRACES);
  std::vector<trace> out;
  std::string word;
  while (in >> word) {
    REQUIRE(word == "case");
    trace t;
    std::size_t segments = 0, n = 0;
    in >> t.name >> t.reserved_peak >> segments >> n;
    t.segment_addresses.resize(segments);
    for (auto& a : t.segment_addresses) in >> a;
    t.events.resize(n);
    for (auto& e : t.events) in >> e;
    out.push_back(std::move(t));
  }
  return out;
}

struct replayed {
  std::int64_t reserved_peak = 0;
  std::int64_t requests = 0;            // served before the end (or the OOM)
  std::int64_t model_oom_at = -1;       // the request the model refused (-1: none)
  std::int64_t trace_oom_at = -1;       // the request PyTorch refused (-1: none)
  std::int64_t refused = 0;             // cuDNN workspaces the cap refused in the trace (R)
  std::int64_t refused_by_model = 0;    // ... and in the model
  std::int64_t served_refused = 0;      // cuDNN workspaces PyTorch served (W) and the model refused
};

const trace* replaying = nullptr;  // for the address tap

/// The trace through the model; with `addresses`, equal-size free blocks are ordered by the
/// trace's segment addresses (detail::segment_address_tap), as PyTorch orders them.
replayed replay(const trace& t, bool addresses) {
  replaying = &t;
  std::int64_t (*by_address)(std::int32_t) = [](std::int32_t segment) {
    const auto k = static_cast<std::size_t>(segment);
    return k < replaying->segment_addresses.size() ? replaying->segment_addresses[k] : INT64_MAX / 2;
  };
  gpubudget::detail::segment_address_tap = addresses ? by_address : nullptr;
  caching_allocator a;
  std::vector<std::int32_t> handle;
  replayed r;
  auto request = [&](std::int64_t bytes) {
    const auto h = a.malloc(bytes);
    if (a.out_of_memory() && r.model_oom_at < 0) r.model_oom_at = r.requests;
    ++r.requests;
    return h;
  };
  for (const auto& e : t.events) {
    if (e[0] == '+') handle.push_back(request(std::stoll(e.substr(1))));
    else if (e[0] == 'W') {  // optional: a refusal is cuDNN's fallback plan, not an out-of-memory
      handle.push_back(a.try_malloc(std::stoll(e.substr(1))));
      r.served_refused += handle.back() < 0;
    } else if (e[0] == '-' && handle[std::stoul(e.substr(1))] >= 0) a.free(handle[std::stoul(e.substr(1))]);
    else if (e == "E") a.release_cached();
    else if (e[0] == 'C') a.set_cap(std::stoll(e.substr(1)));
    else if (e[0] == 'X') r.trace_oom_at = r.requests, request(std::stoll(e.substr(1)));
    else if (e[0] == 'R') {  // PyTorch refused it; the model, if it serves it, gives it straight back
      const auto h = a.try_malloc(std::stoll(e.substr(1)));
      ++r.refused;
      if (h < 0) ++r.refused_by_model;
      else a.free(h);
    }
  }
  gpubudget::detail::segment_address_tap = nullptr;
  r.reserved_peak = a.reserved_peak();
  return r;
}

}  // namespace

TEST_CASE("the allocator model reserves what PyTorch reserved, and runs out where it ran out, on every trace") {
  const auto traces = read_traces();
  REQUIRE(traces.size() == 72);
  int capped = 0, refusing = 0;
  for (const auto& t : traces) {
    INFO(t.name);
    const auto r = replay(t, /*addresses=*/true);
    CHECK(r.reserved_peak == t.reserved_peak);
    CHECK(r.model_oom_at == r.trace_oom_at);  // the capped trials: at PyTorch's failing request, not before
    CHECK(r.refused_by_model == r.refused);   // the cuDNN workspaces the cap refused, and no other
    CHECK(r.served_refused == 0);
    capped += r.trace_oom_at >= 0;
    refusing += r.refused > 0;
  }
  // the 6 one-above trials, the 3 again in a fresh process, VGG16 fp16 b305, and ResNet-34 bf16 b901 and ResNet-50
  // fp32 b181 run 12 steps (they OOM in step 5 and step 6, at PyTorch's request)
  CHECK(capped == 12);
  // ResNet-34 bf16 b901 (3 and 12 steps), DenseNet-121 fp32 b120, VGG16 fp16 b304 and ResNet-50 bf16 b352 (12 steps)
  // refuse cuDNN workspaces on the way (ResNet-50 fp32 b181 trains 3 steps refusing none)
  CHECK(refusing == 5);
}

TEST_CASE("without the trace's addresses, ties go to the oldest segment: a few traces then reserve another way") {
  // The budget's replay has no addresses. Where equal-size cached blocks tie, the model takes the
  // oldest segment's and PyTorch the lowest address; these traces end with another segment set
  // (their bytes today: a change of the model shows here). Every other trace is exact all the same.
  // 17 of the 72, from -6.79 % to +3.06 % of the measured reserved peak: the spread the tie alone
  // puts on a reserved estimate (op_rules.md A16).
  const std::map<std::string, std::int64_t> tie_broken = {
      {"tv_vgg16_b128_224_fp16", 11395923968},           // -6.79 %
      {"cap16_resnet34_b902_bf16_fresh", 16374562816},   // +0.01 % (the OOM still at PyTorch's request)
      {"cap16_resnet50_b182_fp32_fresh", 16353591296},   // -0.03 % (the OOM still at PyTorch's request)
      {"cap16_resnet34_b901_bf16_12steps", 16370368512}, // -0.03 %: its OOM 560 requests earlier
      {"hf_t5_small_b16_t512_bf16", 12379488256},        // -0.03 %
      {"tv_resnet18_b64_224_fp32", 2709520384},          // -3.73 %
      {"cap16_resnet50_b182_fp32", 16353591296},         // -0.03 % (the OOM still at PyTorch's request)
      {"cap16_resnet34_b901_bf16", 16370368512},         // +0.03 % (trains, as it did)
      {"cap16_densenet121_b121_fp32", 16361979904},      // +0.01 % (the OOM still at PyTorch's request)
      {"cap16_t5_small_b23_t512_bf16", 16158556160},     // +0.01 %
      {"tv_resnet18_b128_224_fp16", 2485125120},         // -4.05 %
      {"tv_resnet18_b256_224_bf16", 5574230016},         // +3.06 %
      {"tv_resnet34_b64_224_bf16", 1965031424},          // -0.32 %
      {"tv_resnet50_b32_224_bf16", 2132803584},          // +0.69 %
      {"tv_wide_resnet50_2_b16_224_bf16", 2283798528},   // +0.74 %
      {"cap16_resnet50_b181_fp32_12steps", 16370368512}, // -0.01 %, and it trains: the tie alone decides its OOM
      {"cap16_resnet50_b352_bf16_12steps", 16372465664}};// -0.01 %, refusing none of PyTorch's 82 workspaces
  REQUIRE(tie_broken.size() == 17);
  for (const auto& t : read_traces()) {
    INFO(t.name);
    const auto r = replay(t, /*addresses=*/false);
    const auto known = tie_broken.find(t.name);
    CHECK(r.reserved_peak == (known == tie_broken.end() ? t.reserved_peak : known->second));
    const bool long_trial = t.name == "cap16_resnet34_b901_bf16_12steps";  // the tie moves its OOM: 9,484 vs 10,044
    // ResNet-50 fp32 b181, 12 steps (H200 call 18): PyTorch ran out of memory in step 6; the model, fed the same
    // requests and the same addresses, at the same request; ordering ties by segment age instead, it trains.
    // So the budget's answer for this trial is the driver's address order, not a rule (op_rules.md A16)
    const bool tie_trains = t.name == "cap16_resnet50_b181_fp32_12steps";
    const bool oom_where_expected = long_trial   ? r.model_oom_at > 0 && r.model_oom_at < r.trace_oom_at
                                    : tie_trains ? r.model_oom_at < 0 && r.trace_oom_at > 0
                                                 : r.model_oom_at == r.trace_oom_at;
    CHECK(oom_where_expected);
    // ResNet-50 bf16 b352, 12 steps: PyTorch's cap refused 82 cuDNN workspaces (the model with addresses the same 82);
    // by segment age, none: the blocks they would have needed are free in another order
    const bool tie_refuses_none = t.name == "cap16_resnet50_b352_bf16_12steps";
    if (tie_refuses_none) CHECK((r.refused_by_model == 0 && r.refused == 82));
    else if (!long_trial) CHECK(r.refused_by_model == r.refused);
    // one forward workspace PyTorch served the model refuses at b901 (cuDNN falls back; it still trains)
    CHECK(r.served_refused == (t.name == "cap16_resnet34_b901_bf16" ? 1 : long_trial ? 3 : 0));
  }
}

TEST_CASE("an optional request (a cuDNN workspace) that the cap refuses is no out-of-memory") {
  using gpubudget::detail::caching_allocator;
  caching_allocator a({}, 64 * 1024 * 1024);  // a 64 MiB cap
  const auto held = a.malloc(40 * 1024 * 1024);
  REQUIRE(held >= 0);
  CHECK(a.try_malloc(40 * 1024 * 1024) == -1);  // cuDNN's try_configs: the next engine
  CHECK_FALSE(a.out_of_memory());
  CHECK(a.malloc(40 * 1024 * 1024) == -1);      // a tensor: an OOM
  CHECK(a.out_of_memory());
}

TEST_CASE("lift_cap_after_oom: the OOM is reported and the run goes on uncapped; an optional request is no OOM") {
  constexpr std::int64_t MiB = 1024 * 1024;
  caching_allocator a({}, 64 * MiB);
  a.lift_cap_after_oom();
  CHECK(a.try_malloc(100 * MiB) == -1);  // refused under the cap: cuDNN takes its next engine
  CHECK_FALSE(a.out_of_memory());
  REQUIRE(a.malloc(40 * MiB) >= 0);
  CHECK(a.malloc(40 * MiB) >= 0);        // past the cap: reported, and served
  CHECK(a.out_of_memory());
  CHECK(a.allocated() == 80 * MiB);
  CHECK(a.try_malloc(100 * MiB) >= 0);   // no cap any more

  allocator_settings expandable{};
  expandable.expandable_segments = true;
  caching_allocator e(expandable, 60 * MiB);  // pages of 20 MiB: three fit under the cap
  e.lift_cap_after_oom();
  REQUIRE(e.malloc(50 * MiB) >= 0);
  CHECK_FALSE(e.out_of_memory());
  CHECK(e.malloc(30 * MiB) >= 0);            // the free 10 MiB tail maps one more page, past the cap
  CHECK(e.out_of_memory());
  CHECK(e.reserved() == 80 * MiB);
}

// With expandable segments the free block at the end of the mapped pages counts, for best fit,
// as large as it can grow: a request goes to the next larger free block while one is left
// (CUDACachingAllocator.cpp get_free_block, `expandable_size`; op_rules.md A15).
TEST_CASE("expandable segments: best fit passes over the free tail while a larger free block is left (A15)") {
  constexpr std::int64_t MiB = 1024 * 1024;
  allocator_settings conf{};
  conf.expandable_segments = true;
  caching_allocator a(conf);
  const auto first = a.malloc(8 * MiB);  // maps one 20 MiB page: [8 MiB][12 MiB free tail]
  const auto middle = a.malloc(6 * MiB);
  REQUIRE(a.malloc(4 * MiB) >= 0);       // [8][6][4][2 MiB free tail]
  REQUIRE(first >= 0);
  a.free(middle);                        // a 6 MiB free block inside, the 2 MiB tail after
  CHECK(a.reserved() == 20 * MiB);
  REQUIRE(a.malloc(2 * MiB) >= 0);       // fits the tail exactly, yet takes 2 of the inner 6 MiB
  REQUIRE(a.malloc(6 * MiB) >= 0);       // so 6 MiB finds no free block: the tail grows a page
  CHECK(a.reserved() == 40 * MiB);       // (had the 2 MiB taken the tail: still 20 MiB)
  CHECK(a.malloc(2 * MiB) >= 0);         // the inner block's 4 MiB rest, not the tail
  CHECK(a.malloc(3 * MiB) >= 0);         // only the tail (16 MiB) is left: taken
  CHECK(a.reserved() == 40 * MiB);
}

#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/models/transformers.hpp>

// Issue I: the replay is cheap enough to run in a constant evaluation for a zoo CNN at the
// compilers' default limits (552,554 of Clang's 1,048,576 steps; benchmarks/compile_time/README.md).
// CI builds this file with GCC 12 and Clang 14, so a change that makes the replay too dear for
// either fails here; and the constant evaluation must give what the run-time one gives.
TEST_CASE("a ResNet-50 budget with the allocator model is a constant expression, equal to the run-time one") {
  using namespace gpubudget;
  constexpr auto net = models::resnet50(224, 1000);
  constexpr training plan{.batch = 32, .model_allocator = true};
  constexpr auto at_compile_time = budget(net, plan, devices::v100_16gb);
  static_assert(at_compile_time.allocator_modelled);
  static_assert(at_compile_time.reserved_peak >= at_compile_time.allocated_total_peak);
  const auto at_run_time = budget(net, plan, devices::v100_16gb);
  CHECK(at_compile_time.reserved_peak == at_run_time.reserved_peak);
  CHECK(at_compile_time.allocated_total_peak == at_run_time.allocated_total_peak);
  CHECK(at_compile_time.total() == at_run_time.total());
}

TEST_CASE("max_micro_batch with the allocator model: the largest batch the capped allocator runs") {
  // Under a cap the allocator frees its cache and retries before an OOM, so it runs micro-batches
  // the uncapped lines put over (ResNet-50 at 224² on a V100 16 GB: the lines say 171). The
  // search used to trust the lines there and stopped at their answer.
  using namespace gpubudget;
  const auto net = models::resnet50(224, 1000);
  const training plan{.batch = 8, .model_allocator = true};
  const auto& dev = devices::v100_16gb;
  const auto answer = max_micro_batch(net, plan, dev);
  auto fits_at = [&](std::int64_t mb) { return fits(budget_totals(net, detail::at_micro_batch(plan, mb), dev)); };
  CHECK(fits_at(answer));
  CHECK_FALSE(fits_at(answer + 1));
  const auto lines = detail::estimate_micro_batch(net, plan, dev, 7, 100);
  CHECK(lines.capped_allocator);
  CHECK(answer > lines.largest);
  CHECK_FALSE(detail::settled_above(lines, plan, lines.largest));
}

TEST_CASE("the batch search's budgets replay the capped run alone, and fit where the budget fits") {
  // ResNet-50 at 224² on a V100 16 GB: 183 fits only because the capped allocator frees its cache
  // (the uncapped run reserves more than the device), 184 does not (max_micro_batch's answer, 183).
  using namespace gpubudget;
  const auto net = models::resnet50(224, 1000);
  const training plan{.batch = 8, .model_allocator = true};
  static int replays = 0;
  detail::allocator_event_tap = [](char what, std::int64_t, std::int32_t) { replays += what == 'R'; };
  for (const std::int64_t mb : {183, 184}) {
    INFO(mb);
    replays = 0;
    const auto full = detail::totals_any_micro_batch(net, detail::at_micro_batch(plan, mb), devices::v100_16gb);
    const auto full_replays = replays;
    replays = 0;
    const auto probe = detail::totals_any_micro_batch(net, detail::at_micro_batch(plan, mb), devices::v100_16gb, /*fits_only=*/true);
    CHECK(full_replays == 2);  // uncapped (past the device), then capped
    CHECK(replays == 1);       // capped, going on uncapped after an OOM (lift_cap_after_oom)
    CHECK(fits(probe) == fits(full));
    CHECK(fits(probe) == (mb == 183));
    // the blocks in use, the search's distance: the uncapped run's within what a cap changes
    // (block remainders, optional workspaces the cap refused before the OOM)
    INFO(probe.allocated_total_peak << " vs " << full.allocated_total_peak);
    CHECK(probe.allocated_total_peak * 100 <= full.allocated_total_peak * 101);
    CHECK(probe.allocated_total_peak * 100 >= full.allocated_total_peak * 99);
  }
  detail::allocator_event_tap = nullptr;
}

namespace {
// The replay's requests and frees (detail::allocator_event_tap, run time only), in order.
struct tap_event {
  char what;
  std::int64_t bytes;
  std::int32_t handle;
};
std::vector<tap_event>& tapped() {
  static std::vector<tap_event> events;
  return events;
}
template <class Net>
std::vector<tap_event> replay_events(const Net& net, std::int64_t batch,
                                     gpubudget::precision_mode precision = gpubudget::precision_mode::fp32) {
  using namespace gpubudget;
  tapped().clear();
  detail::allocator_event_tap = [](char what, std::int64_t bytes, std::int32_t handle) { tapped().push_back({what, bytes, handle}); };
  const auto b = budget_totals(net, training{.batch = batch, .precision = precision, .model_allocator = true}, devices::h100_80gb);
  detail::allocator_event_tap = nullptr;
  REQUIRE(b.allocator_modelled);
  return tapped();
}
}  // namespace

TEST_CASE("a weight and its bias get a .grad block each (A14)") {
  // BERT-base b2 t64 bf16 (cuda-h200/cuda-cases): ToCopyBackward0 makes 9,437,184 B for an
  // intermediate Linear's weight, then 12,288 B for its bias; one 9,449,472 B block per Linear
  // put one 20 MiB segment and one 90 MiB segment too many in the replay
  using namespace gpubudget;
  const auto net = sequential(input(768), linear(3072));
  const std::int64_t weight = 768 * 3072 * 4, bias = 3072 * 4;
  std::int64_t weights = 0, biases = 0;
  for (const auto& e : replay_events(net, 2)) {
    CHECK_FALSE((e.what == '+' && e.bytes == weight + bias));
    weights += e.what == '+' && e.bytes == weight;
    biases += e.what == '+' && e.bytes == bias;
  }
  CHECK(weights >= 2);  // model.to() and the .grad
  CHECK(biases >= 2);
  // under autocast the 16-bit gradients ToCopyBackward0 turns into them are two blocks as well
  // (events 1603 and 1604: 4,718,592 B and 1,536 B; the node's own temporary stays one block)
  std::int64_t half_biases = 0;
  for (const auto& e : replay_events(net, 2, precision_mode::amp_bf16)) {
    CHECK_FALSE((e.what == '+' && e.bytes == weight + bias));
    half_biases += e.what == '+' && e.bytes == bias / 2;
  }
  CHECK(half_biases >= 1);
}

TEST_CASE("the mean-square loss's PowBackward0 asks its two temporaries before its result (A6)") {
  // GPT-2 b2 t64 fused AdamW (cuda-h200/cuda-cases): div (MeanBackward0), then PowBackward0's
  // pow, mul and its result, the result outliving the other two (events 452-455, 25,731,584 B
  // each); kept the other way round, the replay's step 2 found the tied weight's freed .grad whole
  // and reserved one 155 MB segment less
  using namespace gpubudget;
  const auto net = sequential(input(1024), linear(4096));
  const std::int64_t out = 2 * 4096 * 4;
  std::map<std::int32_t, std::int64_t> bytes;  // each block's request (handles are reused)
  std::vector<std::int32_t> run;                // out-sized requests with none of them freed between
  std::vector<std::int32_t> freed;              // the first two out-sized blocks freed after four
  for (const auto& e : replay_events(net, 2)) {
    if (e.what == '+') bytes[e.handle] = e.bytes;
    if (e.what == '+' && e.bytes == out) run.push_back(e.handle);
    if (e.what != '-' || bytes[e.handle] != out) continue;
    if (run.size() < 4) run.clear();
    else freed.push_back(e.handle);
    if (freed.size() == 2) break;
  }
  REQUIRE(run.size() >= 4);
  REQUIRE(freed.size() == 2);
  // the mean's gradient, two temporaries, the result: the temporaries go first
  CHECK(freed[0] == run[run.size() - 3]);
  CHECK(freed[1] == run[run.size() - 2]);
}

TEST_CASE("the main thread's cuBLAS workspace comes at the forward's first GEMM (A3)") {
  // ResNet-18 b8 448² fp32 (cuda-h200/tv_resnet18_b8_448_fp32.json.gz): setWorkspaceForHandle at
  // event 294, after every convolution (the classifier's addmm); made at the forward's start, the
  // replay's seventh segment was a 32 MiB one where the trace's was the stem's output. A Llama's
  // comes right after the embedding: transformers' rotary tables are a matmul.
  using namespace gpubudget;
  auto first_workspace_at = [](const auto& net) {  // the storage it comes before ('B' events)
    for (const auto& e : replay_events(net, 2))
      if (e.what == 'B') return e.bytes;
    return std::int64_t{-1};
  };
  const auto cnn = sequential(input(3, 32, 32), conv2d(16, 3), relu(), conv2d(16, 3), relu(), adaptive_avg_pool2d(1, 1), flatten(), linear(10));
  CHECK(first_workspace_at(cnn) >= 6);  // the input, the convolutions' and activations' outputs, the pool's
  const auto no_gemm = sequential(input(3, 32, 32), conv2d(16, 3), relu());
  CHECK(first_workspace_at(no_gemm) == 0);  // none noted: at the forward's start, as before
  models::llama_config g{.vocab = 1000, .width = 256, .layers = 2, .heads = 4, .kv_heads = 4, .ffn = 512, .context = 64, .seq = 64};
  CHECK(first_workspace_at(models::llama(g)) == 2);  // after the token ids and the embedding's output
}

TEST_CASE("the replay runs the job's steps: a capped job can run out of memory in a later step (A19)") {
  // ResNet-34 AMP bf16 at batch 901 under a 16 GiB H200 (the caching allocator capped at 16 GiB less
  // the context): it trained 3 steps and ran out of memory in step 5 of 12 (real-libraries-h200.json,
  // cap16_resnet34_b901_bf16 and its _12steps twin, H200 device calls 11 and 17)
  using namespace gpubudget;
  const auto net = models::resnet34(224, 1000);
  training plan{.batch = 901, .precision = precision_mode::amp_bf16, .loss = loss_kind::cross_entropy, .output_held = false,
                .model_allocator = true};
  device d = devices::h200;
  d.capacity = 16 * GiB;
  static int steps = 0;
  detail::allocator_event_tap = [](char what, std::int64_t, std::int32_t) { steps += what == 'P'; };
  auto run = [&](std::int32_t job_steps) {
    steps = 0;
    plan.steps = job_steps;
    return fits(budget_totals(net, plan, d));
  };
  CHECK(run(3));             // the 3-step trial trains
  CHECK(steps <= 2 + 3);     // the uncapped replay (settles in 2 steps), then at most 3 capped ones
  CHECK_FALSE(run(12));      // a 12-step job does not: the cache churns under the cap, step after step
  CHECK(steps > 2 + 3);
  CHECK(steps <= 2 + 12);
  detail::allocator_event_tap = nullptr;
}

TEST_CASE("a plan that does not name its steps is a long job (training::steps = 0, long_job_steps)") {
  // ResNet-18 fp32 at batch 720 on a V100 16 GB: a 3-step trial fits; a long job's later steps free
  // cached segments and make others under the cap and do not (the zoo's largest batch: 719 by
  // default, 720 under A12's old default rule, which stopped where the trial does)
  using namespace gpubudget;
  const auto net = models::resnet18(224, 1000);
  auto fits_with = [&](std::int32_t steps) {
    return fits(budget_totals(net, training{.batch = 720, .model_allocator = true, .steps = steps}, devices::v100_16gb));
  };
  const bool by_default = fits_with(0);
  CHECK(fits_with(3));
  CHECK_FALSE(fits_with(detail::long_job_steps));
  CHECK(by_default == fits_with(detail::long_job_steps));
  CHECK_FALSE(by_default);
}
