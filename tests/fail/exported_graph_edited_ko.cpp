// expect: shape_mismatch_between_layers
// An exported header edited by hand into a model PyTorch would reject: the residual branch of
// bev_unfold_net's block widens 32 channels to 64, so x + f(x) cannot be added. The library's
// shape rules stop the build, naming the problem (a header is checked like any description).
#include <gpubudget/gpubudget.hpp>

namespace {
using namespace gpubudget;
constexpr auto edited = sequential(
    input(3, 64, 64),
    named("stem", sequential(named("0", conv2d(32, 3, stride(2), padding(1), no_bias)), named("1", batch_norm()), named("2", relu_inplace()))),
    named("blocks", sequential(named("0", residual(unfold(3, padding(1), stride(1)), reshape(288, 32, 32), named("mix", conv2d(64, 1)),
                                                   named("norm", group_norm(8)), named("act", silu()))))),
    named("pool", adaptive_avg_pool2d(1, 1)), flatten(0), named("head", linear(10)));
constexpr auto b = budget_totals(edited, training{.batch = 2}, devices::t4);
static_assert(b.parameter_count > 0);
}  // namespace
