// expect: zero_stage_out_of_range
// DeepSpeed has ZeRO stages 0 to 3: a layout with stage 4 is a named compile-time error.
#include <gpubudget/distributed.hpp>
#include <gpubudget/models/gpt.hpp>

using namespace gpubudget;

constexpr training per_gpu{.batch = 1, .precision = pure_bf16, .optimizer = adamw};
constexpr auto r = per_rank_budget(models::gpt(models::gpt2_small(128)), per_gpu, zero(4, 8), devices::a100_40gb);

int main() { return r.total() > 0 ? 0 : 1; }
