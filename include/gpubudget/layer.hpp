// gpubudget/layer.hpp — the one record every layer and every composition node is stored as.
//
// Models are flat constexpr arrays of `layer` records in pre-order: a composite node (sequence,
// residual, repeat, ...) is followed by its children, and `span` says how many records its
// subtree occupies. Plain records keep the arithmetic a loop over an array instead of template
// recursion over heterogeneous types, which is what makes 1,600-layer graphs cheap to compile.
#pragma once
#include <cstdint>

#include <gpubudget/shape.hpp>
#include <gpubudget/units.hpp>

namespace gpubudget {

enum class op : std::uint8_t {
  // leaves
  input, linear, conv, conv_transpose, batch_norm, layer_norm, group_norm, embedding,
  activation, softmax, dropout, max_pool, avg_pool, adaptive_avg_pool, flatten, reshape,
  transpose, attention, unfold, patch_embedding, graph_conv, graph_attention, scale,
  token_select, mean_over, local_attention, permute, layer_scale, stochastic_depth, learned_positions, dual_cross_vit,
  mobile_activation, squeeze_excitation, window_attention, patch_merging, rms_norm, token_type_embedding,  // model zoo
  // compositions
  sequence, residual, parallel, repeat,
};

enum class activation_kind : std::uint8_t { relu, relu_inplace, gelu, silu, sigmoid, tanh, leaky_relu, elu };

/// How the outputs of parallel branches are combined.
enum class merge_kind : std::uint8_t {
  concat,       ///< torch.cat along per-sample dimension 0
  add,          ///< a + b + ... (out of place)
  add_inplace,  ///< first += others (torchvision's `out += identity`): no new tensor
  multiply,     ///< elementwise product
  stack,        ///< torch.stack: a new dimension 0
};

/// Flags a composition can carry.
struct node_flags {
  bool checkpoint = false;  ///< re-materialize this block in backward (non-reentrant checkpoint)
  bool frozen = false;      ///< parameters of this block do not require grad
};

struct layer {
  op kind = op::input;
  std::int32_t span = 1;          ///< records in this subtree, itself included
  std::int64_t a[8] = {};         ///< op-specific integer arguments (see each family's header)
  activation_kind act = activation_kind::relu;
  merge_kind merge = merge_kind::concat;
  dtype type = dtype::fp32;       ///< input: element type of the data
  bool bias = true;
  bool channels_last = false;     ///< conv: input arrives channels-last-strided (CPU transients)
  node_flags flags{};
  std::int32_t share_id = 0;      ///< >0: parameters shared by every subtree with this id
  const char* name = nullptr;     ///< optional display name
};

}  // namespace gpubudget
