// budget_totals_of (budget_of.hpp: the caching allocator replay spread over constant
// evaluations, 512 storages each) gives budget_totals's numbers to the byte: uncapped, capped after
// an uncapped reservation that passes the device (it fits, or it runs out of memory), with
// expandable segments, frozen base weights and a job's named steps; and max_micro_batch_of,
// whose probes now replay that way, is held to max_micro_batch in tests/unit/test_budget_of.cpp
// (max_micro_batch replays every probe in one evaluation: past Clang's limit at compile time),
// and more plans there, held to budget_totals run at run time (in one evaluation, ResNet-18's
// checkpointed blocks pass Clang's default limit).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/models/transformers.hpp>

#include "../support/same_budget.hpp"

namespace {
using namespace gpubudget;

using testing::same_budget;

constexpr auto net = models::resnet18(64, 10);

// uncapped: the run fits a T4 with room to spare
constexpr training small{.batch = 64, .model_allocator = true};
constexpr auto small_split = budget_totals_of<net, small, devices::t4>();
static_assert(small_split.allocator_modelled && small_split.reserved_peak > 0 && !small_split.allocator_out_of_memory);
static_assert(same_budget(small_split, budget_totals(net, small, devices::t4)));

// batch 5000: the uncapped reservation (16.1 GB) passes the T4's cap, so the capped run is
// replayed too, and fits: it frees its cache and retries before an OOM
constexpr training near_cap{.batch = 5000, .model_allocator = true};
constexpr auto near_cap_split = budget_totals_of<net, near_cap, devices::t4>();
static_assert(near_cap_split.reserved_peak > devices::t4.capacity - devices::t4.context && !near_cap_split.allocator_out_of_memory);
static_assert(same_budget(near_cap_split, budget_totals(net, near_cap, devices::t4)));

// batch 9000: the capped run runs out of memory
constexpr training over{.batch = 9000, .model_allocator = true};
constexpr auto over_split = budget_totals_of<net, over, devices::t4>();
static_assert(over_split.allocator_out_of_memory && !fits(over_split));
static_assert(same_budget(over_split, budget_totals(net, over, devices::t4)));

// expandable segments, and a job of five named steps (a step of its own evaluation each)
constexpr training expandable{.batch = 256, .model_allocator = true, .allocator = {.expandable_segments = true}, .steps = 5};
static_assert(same_budget(budget_totals_of<net, expandable, devices::t4>(), budget_totals(net, expandable, devices::t4)));

// LoRA on a small Llama in bf16: frozen base weights resident before the adapters
constexpr models::llama_config tiny_llama{.vocab = 1000, .width = 256, .layers = 2, .heads = 4, .kv_heads = 2, .ffn = 512, .context = 128, .seq = 64};
constexpr auto lora = models::llama_lora(tiny_llama, {.rank = 8});
constexpr training lora_plan{.batch = 4, .precision = precision_mode::amp_bf16, .model_allocator = true};
constexpr auto lora_split = budget_totals_of<lora, lora_plan, devices::a100_80gb>();
static_assert(lora_split.base_weight_bytes > 0 && lora_split.allocator_modelled);
static_assert(same_budget(lora_split, budget_totals(lora, lora_plan, devices::a100_80gb)));

// an inference forward is replayed too (op_rules.md A22): no optimizer state, its passes until the
// cache settles; the small Llama's eval forward holds its DynamicCache copies with the output
constexpr auto tiny = models::llama(tiny_llama);
constexpr training eval_plan{.batch = 4, .precision = precision_mode::pure_bf16, .inference = true, .model_allocator = true};
constexpr auto eval_split = budget_totals_of<tiny, eval_plan, devices::a100_80gb>();
static_assert(eval_split.allocator_modelled && eval_split.reserved_peak >= eval_split.allocated_total_peak);
static_assert(same_budget(eval_split, budget_totals(tiny, eval_plan, devices::a100_80gb)));

// without the allocator model it is budget_totals (the flat reserve)
constexpr training flat{.batch = 64};
static_assert(!budget_totals_of<net, flat, devices::t4>().allocator_modelled);
static_assert(same_budget(budget_totals_of<net, flat, devices::t4>(), budget_totals(net, flat, devices::t4)));

}  // namespace
