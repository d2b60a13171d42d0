// expect: lora_target_cannot_take_an_adapter
// get_peft_model with a target that names a BatchNorm (LoRA wraps Linear and convolution layers).
// Twin: tests/static/hardening_ok.cpp (lora_target_norm).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>

using namespace gpubudget;

constexpr auto net = sequential(input(3, 32, 32), named("stem", conv2d(16, 3, padding(1))), named("bn", batch_norm()), relu(), adaptive_avg_pool2d(1, 1),
                                flatten(), named("fc", linear(10)));
constexpr auto m = models::get_peft_model(net, "bn", {.rank = 4});
static_assert(budget_totals(m, training{.batch = 8}, devices::generic_16gb).trainable_count > 0);

int main() {}
