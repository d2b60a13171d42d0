// Auxiliary classifiers, budgeted as they train.
//
// GoogLeNet and Inception-v3 train with side classifiers hung off the middle of the network; in
// train() torchvision's models return (logits, aux...) and PyTorch's fine-tuning tutorial trains
// `loss1 + 0.4 * loss2`. A side head adds its weights (GoogLeNet's two InceptionAux heads hold 6.4 M
// of its 13.0 M parameters: each a 2048 -> 1024 Linear), their gradients and Adam's state; its
// activations are kept until backward reaches it, and its output and its loss's gradient wait
// with them. Switching the heads off to get a simpler model to budget (aux_logits=False) budgets
// another job: measured on PyTorch 2.6's CPU step (tests/export, googlenet_aux_b2_128), the model
// without its heads is 35.8 % below the step that trains with them; auxiliary_output(...) is within
// 0.07 %.
//
// Below, a VGG-style network at 224² with GoogLeNet's InceptionAux after its third and fourth
// stages (auxiliary_output: the head runs right where it hangs), on a T4, AdamW, batch 32.
// auxiliary_output_last(...) is the same head run after the model's output, its input held until
// then (torchvision FCN's aux_classifier with aux_loss=True). gpubudget-export writes either one for
// a model that returns (out, aux, ...) or {"out": ..., "aux": ...}.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr auto conv_bn(std::int64_t channels) { return sequential(conv2d(channels, 3, padding(1), no_bias), batch_norm(), relu_inplace()); }
constexpr auto stage(std::int64_t channels) { return sequential(conv_bn(channels), conv_bn(channels), max_pool2d(2)); }
// torchvision's InceptionAux (GoogLeNet): pool to 4x4, a 1x1 conv to 128, fc 2048 -> 1024, dropout 0.7, fc -> 1000
constexpr auto inception_aux = sequential(adaptive_avg_pool2d(4, 4), conv2d(128, 1, no_bias), batch_norm(), relu_inplace(), flatten(), linear(1024), relu_inplace(), dropout(70), linear(1000));
constexpr auto classifier = sequential(adaptive_avg_pool2d(1, 1), flatten(), linear(1000));

template <class... Heads>
constexpr auto network(Heads... heads) {
  // the heads after stages 3 and 4 (none: the model without them)
  if constexpr (sizeof...(Heads) == 0) {
    return sequential(input(3, 224, 224), stage(64), stage(128), stage(256), stage(512), stage(512), classifier);
  } else {
    return sequential(input(3, 224, 224), stage(64), stage(128), stage(256), heads..., stage(512), heads..., stage(512), classifier);
  }
}

constexpr auto with_heads = network(auxiliary_output(inception_aux));
constexpr auto without_heads = network();
constexpr auto& gpu = devices::t4;
constexpr auto plan = training{.batch = 32, .optimizer = adamw};
constexpr auto with_budget = budget_totals(with_heads, plan, gpu);
constexpr auto without_budget = budget_totals(without_heads, plan, gpu);

// two InceptionAux heads: a 1x1 conv from 256 and from 512 channels to 128 with its batch norm,
// and each 2048 -> 1024 -> 1000 Linears
constexpr std::int64_t head_linears = 2048 * 1024 + 1024 + 1024 * 1000 + 1000;
static_assert(with_budget.parameter_count - without_budget.parameter_count == (256 * 128 + 2 * 128) + (512 * 128 + 2 * 128) + 2 * head_linears);
static_assert(with_budget.step_peak > without_budget.step_peak);
static_assert(fits(with_budget));
constexpr auto with_largest = max_micro_batch_of<with_heads, plan, gpu>();
constexpr auto without_largest = max_micro_batch_of<without_heads, plan, gpu>();
static_assert(with_largest >= 32 && with_largest <= without_largest);
}  // namespace

int main() {
  std::cout << "A VGG-style network at 224² with GoogLeNet's auxiliary classifiers, batch " << plan.batch << ", AdamW, on " << gpu.name << "\n\n";
  std::vector<labelled_budget> rows{{"with its two auxiliary heads (as it trains)", with_budget}, {"heads switched off", without_budget}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest micro-batch: " << with_largest << " with the heads, " << without_largest << " without\n";
}
