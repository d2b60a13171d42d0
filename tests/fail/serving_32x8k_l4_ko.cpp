// expect: serving_exceeds_gpu_memory<
// "Llama-3-8B in bf16 serves 32 sequences of 8k tokens on one L4": it does not (32 GiB of KV
// alone); the diagnostic names the needed and usable MiB and how many sequences would fit.
// Twin: tests/unit/test_serving.cpp (2 sequences fit).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/serving.hpp>

using namespace gpubudget;

constexpr auto s = serve(models::llama3_8b(), serving{.context = 8192, .concurrency = 32}, devices::l4);
static_assert(require_serves<s>);

int main() {}
