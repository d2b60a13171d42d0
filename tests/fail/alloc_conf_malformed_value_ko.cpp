// expect: alloc_conf_malformed_value
// max_split_size_mb must be more than 20 (PyTorch's parseMaxSplitSize).
// Twin: tests/static/alloc_conf_facts.cpp (max_split_size_mb:512).
#include <gpubudget/gpubudget.hpp>

using namespace gpubudget;

constexpr auto conf = alloc_conf("max_split_size_mb:16");

static_assert(conf.max_split_size > 0);

int main() {}
