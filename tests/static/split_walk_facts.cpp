// A walk split over constant evaluations (budget_of.hpp: split_walk, carried_walk.hpp) gives the
// whole walk's step to the byte. Small units force a stop after every few of the root's children
// (or of the sequences nested in them) and every few backward nodes: the carried simulator and walker must hold everything the rest of
// the step reads (gradient accumulation's second pass, checkpoints, shared inputs, chunked
// gradients, the allocator's tape).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/models/transformers.hpp>

#include "../support/same_budget.hpp"

namespace {
using namespace gpubudget;
using testing::same_budget;
using testing::same_step;

/// The step of `Plan` walked `Units` at a time equals the whole walk's (which logs the same tape).
template <const auto& Model, training Plan, std::int64_t Units>
constexpr bool split_walk_is_whole() {
  using split = detail::split_walk<Model, Plan, false, Units>;
  static_assert(!split::whole, "the walk must be split for the test to mean anything");
  const auto whole = detail::walk_for_replay(Model, Plan);
  return same_step(split::walked.step, whole.step) && split::walked.extent.storages == whole.extent.storages &&
         split::walked.extent.temporaries == whole.extent.temporaries && split::walked.extent.parameter_tensors == whole.extent.parameter_tensors;
}

constexpr auto resnet = models::resnet18(64, 10);
static_assert(detail::split_walk<resnet, training{.batch = 8}, false, 10>::after<0>().progress.next > 1);  // stopped in the forward
static_assert(split_walk_is_whole<resnet, training{.batch = 8}, 10>());
// each evaluation keeps its state in the room the one before it guessed (room_after)...
using resnet_split = detail::split_walk<resnet, training{.batch = 8}, false, 10>;
static_assert(resnet_split::evaluations() > 10 && resnet_split::remeasured() < resnet_split::evaluations() / 4);
// ...and where that overflows (a root child of 40 layers after children of one, a residual: the
// walk cannot stop inside it), the evaluation runs twice, measuring the sizes it leaves first
constexpr auto block = sequential(linear(96), layer_norm(), gelu(), linear(64), relu(), conv1d(8, 3, padding(1)), batch_norm(), silu());
constexpr auto jump = sequential(input(8, 64), linear(64), relu(), linear(64), relu(), residual(block, block, block, block, block), linear(10));
static_assert(detail::split_walk<jump, training{.batch = 4}, false, 2>::remeasured() > 0);
static_assert(split_walk_is_whole<jump, training{.batch = 4}, 2>());

// A model nested in one sequence below the root, as an exported one is (torchvision's `features`):
// the walk goes into it and stops between its children, and between those of the sequences in it
// (each entered on an activation that only the caller's reference keeps alive, which the split
// walk must hold until the sequence's last child ran, as the whole walk does)
constexpr auto nested =
    sequential(input(8, 64), linear(64), named("features", sequential(relu(), linear(64), block, sequential(relu(), block, block), block)), linear(10));
using nested_split = detail::split_walk<nested, training{.batch = 4}, false, 8>;
static_assert(nested_split::after<0>().progress.depth == 2 && nested_split::evaluations() > 5);
static_assert(split_walk_is_whole<nested, training{.batch = 4}, 8>());
static_assert(split_walk_is_whole<nested, training{.batch = 4}, 3>());
static_assert(split_walk_is_whole<nested, training{.batch = 8, .micro_batch = 4}, 5>());
static_assert(split_walk_is_whole<nested, training{.batch = 4, .checkpoint_all = true}, 5>());  // the root's children checkpointed: not gone into
// checkpointed blocks inside it (re-run in backward from the segment records the split carries)
constexpr auto nested_checkpoints =
    sequential(input(8, 64), linear(64), named("features", sequential(relu(), checkpointed(block), block, checkpointed(block, relu(), block))), linear(10));
static_assert(split_walk_is_whole<nested_checkpoints, training{.batch = 4}, 4>());
// a repeat continuing the nested sequence (it drops its reference to the repeat's input after the
// first copy: graph.hpp's continue_sequence), and sequences deeper than max_open_sequences
constexpr auto continued = sequential(input(8, 64), linear(64), sequential(relu(), linear(64), continue_sequence(repeat<3>(block)), relu()), linear(10));
static_assert(split_walk_is_whole<continued, training{.batch = 4}, 4>());
constexpr auto deep = sequential(input(8, 64), linear(64), sequential(sequential(sequential(sequential(sequential(sequential(sequential(sequential(sequential(
                                                   relu(), block, relu(), block))))))))), linear(10));
static_assert(split_walk_is_whole<deep, training{.batch = 4}, 4>());
constexpr training nested_allocator{.batch = 16, .model_allocator = true};
static_assert(same_budget(detail::split_totals<nested, nested_allocator, devices::t4, 100, false, 6>(),
                          budget_totals(nested, nested_allocator, devices::t4)));
static_assert(split_walk_is_whole<resnet, training{.batch = 8, .micro_batch = 2}, 16>());  // two passes, the second with .grad alive
static_assert(split_walk_is_whole<resnet, training{.batch = 8, .checkpoint_all = true}, 10>());  // every root child a checkpoint
static_assert(split_walk_is_whole<resnet, training{.batch = 8, .inference = true}, 4>());
static_assert(split_walk_is_whole<resnet, training{.batch = 8, .precision = precision_mode::amp_fp16}, 12>());

// the allocator model: the replay reads the split walk's tape (every budget field equal)
constexpr training resnet_allocator{.batch = 32, .model_allocator = true};
static_assert(same_budget(detail::split_totals<resnet, resnet_allocator, devices::t4, 100, false, 12>(),
                          budget_totals(resnet, resnet_allocator, devices::t4)));

// a Llama with rotary tables (shared inputs held until the forward ends), LoRA's frozen base
// weights, its decoder layers a repeat walked copy by copy under the allocator log
constexpr models::llama_config tiny_llama{.vocab = 1000, .width = 128, .layers = 3, .heads = 4, .kv_heads = 2, .ffn = 256, .context = 64, .seq = 32};
constexpr auto llama = models::llama(tiny_llama);
constexpr auto lora = models::llama_lora(tiny_llama, {.rank = 4});
static_assert(split_walk_is_whole<llama, training{.batch = 2, .precision = precision_mode::amp_bf16}, 8>());
static_assert(split_walk_is_whole<lora, training{.batch = 2, .precision = precision_mode::amp_bf16, .model_allocator = true}, 8>());
constexpr training lora_allocator{.batch = 2, .precision = precision_mode::amp_bf16, .model_allocator = true};
static_assert(same_budget(detail::split_totals<lora, lora_allocator, devices::a100_80gb, 100, false, 8>(),
                          budget_totals(lora, lora_allocator, devices::a100_80gb)));


// Auxiliary heads (graph.hpp): a head's held output, and a deferred head's held input, are carried
// to the evaluation that runs the deferred heads and takes the losses
constexpr auto side = sequential(adaptive_avg_pool2d(1, 1), flatten(), linear(10));
constexpr auto with_heads = sequential(input(3, 32, 32), conv2d(16, 3, padding(1)), relu(), auxiliary_output(side), conv2d(16, 3, padding(1)), relu(),
                                       auxiliary_output_last(side), conv2d(32, 3, padding(1)), relu(), adaptive_avg_pool2d(1, 1), flatten(), linear(10));
static_assert(split_walk_is_whole<with_heads, training{.batch = 4}, 2>());
static_assert(split_walk_is_whole<with_heads, training{.batch = 4, .micro_batch = 2}, 2>());
static_assert(split_walk_is_whole<with_heads, training{.batch = 4, .model_allocator = true}, 2>());
}  // namespace
