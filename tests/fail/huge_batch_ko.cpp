// expect: byte_count_overflows_64_bits
// 2⁵⁰ images of 3×224×224 fp32: the input batch alone is 2⁵⁰·602112 B, beyond 2⁶³.
// Twin: tests/static/huge_batch_ok.cpp (2²⁰ images: absurd, but countable, and it does not fit).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto m = sequential(input(3, 224, 224), conv2d(64, 3), relu());
constexpr auto b = budget_totals(m, training{.batch = std::int64_t{1} << 50}, devices::generic_16gb);

static_assert(!fits(b));

int main() {}
