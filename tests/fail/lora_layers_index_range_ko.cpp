// expect: layers_to_transform_index_out_of_range
// A negative layer index in layers_to_transform.
// Twin: tests/static/lora_layers_ok.cpp (lora_layers_index_range).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::lora_config l{.rank = 8, .layers_to_transform = {0, -1}};
static_assert(l.rank == 8);

int main() {}
