// expect: alloc_conf_unknown_key
// a misspelt PYTORCH_CUDA_ALLOC_CONF key (PyTorch would skip it silently).
// Twin: tests/static/alloc_conf_facts.cpp (expandable_segments:True).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto conf = alloc_conf("expandable_segment:True");

static_assert(conf.expandable_segments);

int main() {}
