// gpubudget/layers/blocks.hpp — common blocks built from the layers: transformer blocks and
// MLPs, in the exact op order of the modules the reference measures.
#pragma once
#include <gpubudget/graph.hpp>
#include <gpubudget/layers/activation.hpp>
#include <gpubudget/layers/attention.hpp>
#include <gpubudget/layers/dense.hpp>
#include <gpubudget/layers/norm.hpp>

namespace gpubudget {

/// Pre-norm transformer block: x + attn(LN(x)), then x + MLP(LN(x)) with a GELU MLP of
/// `mlp_ratio`·width. Options go to the attention (kv_tokens, attention_impl, ...).
template <class... Opts>
constexpr auto transformer_block(std::int64_t width, heads h, Opts... opts) {
  return sequential(residual(layer_norm(), attention(width, h, opts...)),
                    residual(layer_norm(), linear(4 * width), gelu(), linear(width)));
}

/// Same with an explicit MLP hidden size.
template <class... Opts>
constexpr auto transformer_block_mlp(std::int64_t width, heads h, std::int64_t hidden, Opts... opts) {
  return sequential(residual(layer_norm(), attention(width, h, opts...)),
                    residual(layer_norm(), linear(hidden), gelu(), linear(width)));
}

}  // namespace gpubudget
