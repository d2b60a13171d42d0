// expect: lora_target_is_not_a_linear
// get_peft_model with a target that names a Conv2d (LoRA is modelled on Linear layers only).
// Twin: tests/static/hardening_ok.cpp (lora_target_conv).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>

using namespace gpubudget;

constexpr auto net = sequential(input(3, 32, 32), named("stem", conv2d(16, 3, padding(1))), relu(), adaptive_avg_pool2d(1, 1), flatten(),
                                named("fc", linear(10)));
constexpr auto m = models::get_peft_model(net, "stem", {.rank = 4});
static_assert(budget_totals(m, training{.batch = 8}, devices::generic_16gb).trainable_count > 0);

int main() {}
