// expect: padded_batch_needs_the_hf_engine
// A padded batch (llama_config::padded_batch) served by vLLM: vLLM schedules sequences unpadded, so
// the padded decode's repeated keys are generate()'s alone; named, not budgeted as something else.
// Twin: tests/unit/test_serving.cpp (the same model under serving_engine::hf is budgeted).
#include <gpubudget/serving.hpp>

using namespace gpubudget;

constexpr models::llama_config padded() {
  auto g = models::llama3_8b();
  g.padded_batch = true;
  return g;
}
static_assert(serve(padded(), serving{.context = 4096}, devices::h100_80gb).kv_cache_bytes > 0);

int main() {}
