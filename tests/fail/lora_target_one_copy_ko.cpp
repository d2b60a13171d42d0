// expect: lora_target_names_one_copy_of_a_repeat
// get_peft_model with a target that names the module of one copy of a repeated block (the copies
// are stored once; layers_to_transform is modelled on the Llama family only).
// Twin: tests/static/hardening_ok.cpp (lora_target_one_copy).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>

using namespace gpubudget;

constexpr auto net = sequential(input(64), named("layers", repeat(4, sequential(named("fc", linear(64)), relu()))), named("head", linear(10)));
constexpr auto m = models::get_peft_model(net, "layers.1.fc", {.rank = 4});
static_assert(budget_totals(m, training{.batch = 8}, devices::generic_16gb).trainable_count > 0);

int main() {}
