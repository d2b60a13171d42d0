// expect: generated_tokens_must_leave_a_prompt
// transformers' generate() budget (serving_engine::hf) asked for as many new tokens as the
// whole context: no prompt is left to prefill.
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/serving.hpp>

using namespace gpubudget;

constexpr auto s = serve(models::llama3_8b(), serving{.context = 512, .engine = serving_engine::hf, .generated = 512}, devices::l4);

static_assert(s.weights > 0);

int main() {}
