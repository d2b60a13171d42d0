// expect: lora_target_cannot_take_an_adapter
// get_peft_model with use_dora=True on an nn.ConvTranspose2d: PEFT wraps nn.Conv1d/2d/3d only
// (peft/tuners/lora/layer.py dispatch_default: a transposed convolution is no nn.Conv2d), so it
// raises "Target module ... is not supported"; DoRA on the plain convolution beside it is modelled.
// Twin: tests/static/hardening_ok.cpp (dora_transposed_conv).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/peft.hpp>

using namespace gpubudget;

constexpr auto net = sequential(input(8, 16, 16), named("down", conv2d(16, 3, padding(1), stride(2))), relu(),
                                named("up", conv_transpose2d(8, 2, stride(2))));
constexpr auto m = models::get_peft_model(net, "down,up", {.rank = 4, .dora = true});
static_assert(budget_totals(m, training{.batch = 8}, devices::generic_16gb).trainable_count > 0);

int main() {}
