// expect: logit_softcap_is_built_by_visit_gemma2
// A soft cap on the logits (Gemma 2's final_logit_softcapping) is built by models::visit_gemma2;
// models::llama would leave it out, a budget short of tanh's kept output.
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::llama_config capped() {
  auto g = models::llama2_7b(64);
  g.logit_softcap = true;
  return g;
}
constexpr auto b = budget_totals(models::llama(capped()), training{.batch = 1}, devices::a100_80gb);

static_assert(b.parameter_count >= 0);

int main() {}
