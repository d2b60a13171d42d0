// A LayerNorm written out by hand, budgeted against nn.LayerNorm at compile time.
//
// harvardnlp/annotated-transformer (the_annotated_transformer.py) writes its LayerNorm as
//
//     mean = x.mean(-1, keepdim=True)
//     std = x.std(-1, keepdim=True)
//     return self.a_2 * (x - mean) / (std + self.eps) + self.b_2
//
// and wraps every sublayer in it: `x + self.dropout(sublayer(self.norm(x)))`. Each operation is
// its own autograd node, and each keeps what its derivative reads: std its input and its result,
// a_2 * (x - mean) the difference, the division both of its operands. nn.LayerNorm keeps its input
// and two per-row statistics. The description says the same, op for op:
//
//     parallel(merge_kind::subtract, sequential(), mean_over(1, 1, keepdim))   x - mean
//     layer_scale(true)                                                         a_2 * (...)
//     parallel(merge_kind::divide, <that>, sequential(std_over(1, 1, keepdim), scale()))
//     learned_bias(true)                                                        + b_2
//
// (what `gpubudget-export` writes for the module itself: tests/export's annotated_ff_stack,
// measured on PyTorch 2.6's CPU step, saved bytes exact, peaks -0.13 %). The encoder below is the
// annotated transformer's at its paper sizes (d_model 512, 8 heads, d_ff 2048, dropout 0.1, six
// layers), on 128 tokens, with its eager attention (4 Linear projections, softmax and dropout on
// the probabilities) and a 32,000-token vocabulary (a stand-in: the size of a BPE vocabulary).
//
// The same holds for an activation written out: transformers' GPT-2 computes its `gelu_new` as
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) in eight ops (NewGELUActivation), which keep x, tanh's
// output, 1 + tanh and 0.5·x where F.gelu keeps x alone; under autocast pow's fp32 copy of x makes
// the rest fp32. models::gpt_config::gelu_new says which one a GPT-2 runs (--hf-config follows the
// config's activation_function).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/gpt.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr std::int64_t d_model = 512, d_ff = 2048, vocab = 32'000, length = 128;

constexpr auto written_layer_norm_of_rows() {
  const auto centered = sequential(parallel(merge_kind::subtract, sequential(), mean_over(1, 1, keepdim)), layer_scale(true));
  return sequential(parallel(merge_kind::divide, centered, sequential(std_over(1, 1, keepdim), scale())), learned_bias(true));
}

template <class Norm>
constexpr auto encoder(Norm norm) {
  const auto self_attention = attention(d_model, heads(8), attention_impl::separate_qkv, attention_dropout(10));
  const auto feed_forward = sequential(linear(d_ff), relu(), dropout(10), linear(d_model));
  const auto layer = sequential(residual(norm, self_attention, dropout(10)), residual(norm, feed_forward, dropout(10)));
  // Embeddings (lut(x) * sqrt(d_model)), PositionalEncoding (+ its pe buffer, then dropout)
  return sequential(tokens(length), embedding(vocab, d_model), scale(), scale(), dropout(10), repeat(6, layer), norm);
}

constexpr auto written = encoder(written_layer_norm_of_rows());
constexpr auto library = encoder(layer_norm());

constexpr auto& gpu = devices::t4;
constexpr auto plan = training{.batch = 32};
constexpr auto written_budget = budget_totals(written, plan, gpu);
constexpr auto library_budget = budget_totals(library, plan, gpu);

// the same parameters either way: a_2 and b_2 are nn.LayerNorm's weight and bias
static_assert(written_budget.parameter_count == library_budget.parameter_count);
// written out, each LayerNorm keeps more for backward than nn.LayerNorm does
static_assert(written_budget.saved_activations > library_budget.saved_activations);
static_assert(fits(written_budget));
constexpr auto written_largest = max_micro_batch_of<written, plan, gpu>();

// GPT-2 small on 512 tokens, AMP bf16, batch 8, on an A100 80GB: gelu_new as transformers writes it
// against F.gelu
constexpr auto gpt2_with = [](bool gelu_new) {
  auto g = models::gpt2_small(512);
  g.gelu_new = gelu_new;
  g.attention = attention_impl::flash;
  return g;
};
constexpr auto gpt_plan = training{.batch = 8, .precision = precision_mode::amp_bf16};
constexpr auto gpt2_gelu_new = budget_totals(models::gpt(gpt2_with(true)), gpt_plan, devices::a100_80gb);
constexpr auto gpt2_gelu = budget_totals(models::gpt(gpt2_with(false)), gpt_plan, devices::a100_80gb);
static_assert(gpt2_gelu_new.parameter_count == gpt2_gelu.parameter_count);
static_assert(gpt2_gelu_new.saved_activations > gpt2_gelu.saved_activations);
constexpr auto library_largest = max_micro_batch_of<library, plan, gpu>();
static_assert(written_largest >= 32 && written_largest < library_largest);
}  // namespace

int main() {
  std::cout << "Annotated-transformer encoder, " << length << " tokens, batch " << plan.batch << ", on " << gpu.name << "\n\n";
  std::vector<labelled_budget> rows{{"LayerNorm written out", written_budget}, {"nn.LayerNorm", library_budget}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest micro-batch: " << written_largest << " written out, " << library_largest << " with nn.LayerNorm\n\n";
  std::cout << "GPT-2 small, 512 tokens, batch 8, AMP bf16, on an A100 80GB\n\n";
  std::vector<labelled_budget> gpt_rows{{"gelu_new written out (transformers)", gpt2_gelu_new}, {"F.gelu", gpt2_gelu}};
  std::cout << comparison_table(gpt_rows);
}
