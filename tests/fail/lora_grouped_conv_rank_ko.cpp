// expect: lora_rank_not_a_multiple_of_the_conv_groups
// get_peft_model on a grouped convolution (32 groups) with a rank PEFT refuses: r = 8 is not a
// multiple of the groups (lora_B is grouped as the base).
// Twin: tests/static/hardening_ok.cpp (lora_grouped_conv_rank).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>

using namespace gpubudget;

constexpr auto net = sequential(input(128, 14, 14), named("conv2", conv2d(128, 3, padding(1), groups(32))), relu());
constexpr auto m = models::get_peft_model(net, "conv2", {.rank = 8});
static_assert(budget_totals(m, training{.batch = 8}, devices::generic_16gb).trainable_count > 0);

int main() {}
