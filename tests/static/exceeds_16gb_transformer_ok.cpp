// Twin of tests/fail/exceeds_16gb_transformer_ko.cpp: the same encoder with batch 64 fits the
// nominal 16 GB card, so both fit checks hold.
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;

constexpr auto encoder = sequential(input(197, 768), repeat<12>(transformer_block(768, heads(12))),
                                    layer_norm(), select_token(0), linear(1000));
constexpr auto b = budget(encoder, training{.batch = 64}, devices::generic_16gb);

static_assert(require_fits<b>);
static_assert(fits(b));
// The numbers the _ko diagnostic prints: available MiB is the capacity rounded down.
static_assert(fit_summary(b).available_mib == 15258);
static_assert(fit_summary(b).needed_mib < fit_summary(b).available_mib);
}  // namespace
