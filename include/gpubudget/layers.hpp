// gpubudget/layers.hpp — every op and block of the library (one header per op family under
// layers/; each op's traits live next to it).
#pragma once
#include <gpubudget/layers/options.hpp>
#include <gpubudget/layers/input.hpp>
#include <gpubudget/layers/dense.hpp>
#include <gpubudget/layers/conv.hpp>
#include <gpubudget/layers/norm.hpp>
#include <gpubudget/layers/activation.hpp>
#include <gpubudget/layers/pooling.hpp>
#include <gpubudget/layers/padding.hpp>
#include <gpubudget/layers/upsample.hpp>
#include <gpubudget/layers/elementwise.hpp>
#include <gpubudget/layers/view.hpp>
#include <gpubudget/layers/attention.hpp>
#include <gpubudget/layers/unfold.hpp>
#include <gpubudget/layers/vision.hpp>
#include <gpubudget/layers/graph_nn.hpp>
#include <gpubudget/layers/dual_attention.hpp>
#include <gpubudget/layers/blocks.hpp>
#include <gpubudget/layers/mobile.hpp>
#include <gpubudget/layers/swin.hpp>
#include <gpubudget/layers/llama.hpp>
#include <gpubudget/layers/bert.hpp>
#include <gpubudget/layers/adapters.hpp>
#include <gpubudget/layers/moe.hpp>
#include <gpubudget/layers/cross_attention.hpp>
#include <gpubudget/layers/t5.hpp>
