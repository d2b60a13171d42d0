// expect: micro_batch_does_not_divide_batch
// A timeline checks its plan as budget() does: batch 8 in micro-batches of 3 is named, not drawn.
// Twin: tests/unit/test_timeline.cpp (the same model's timeline at micro-batch 4 in constant evaluation).
#include <gpubudget/timeline.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(512), linear(256), relu(), linear(10));

static_assert(timeline(m, training{.batch = 8, .micro_batch = 3}, devices::generic_16gb).points.size() > 0);

int main() {}
