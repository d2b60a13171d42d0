// A downstream project: find_package(gpubudget) then a compile-time check.
#include <gpubudget/gpubudget.hpp>
#include <cstdio>
using namespace gpubudget;
constexpr auto net = sequential(input(512), linear(512), relu(), linear(10));
constexpr auto b = budget(net, training{.batch = 32}, devices::t4);
static_assert(require_fits<b>);
int main() { std::printf("consumer fits: %s\n", fits(b) ? "yes" : "no"); }
