// expect: layers_to_transform_list_is_empty
// An empty range of layers for layers_to_transform (PEFT reads [] as None, every layer: the
// default says that; an empty range is a mistake).
// Twin: tests/static/lora_layers_ok.cpp (lora_layers_empty).
#include <gpubudget/gpubudget.hpp>
#include <gpubudget/models/transformers.hpp>

using namespace gpubudget;

constexpr models::lora_config l{.rank = 8, .layers_to_transform = models::layer_set::range(4, 4)};
static_assert(l.rank == 8);

int main() {}
