// expect: static.assert[a-z]* failed.*gpubudget harness self-check
// Harness self-check ({fmt} style): this file fails for one known reason, and the test passes
// only if the compiler output shows that reason. It includes the library so that a broken
// include path (an unrelated failure) does not pass as this one.
#include <gpubudget/gpubudget.hpp>

static_assert(sizeof(int) == 0, "gpubudget harness self-check");

int main() {}
