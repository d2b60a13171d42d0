// gpubudget/layers/conditioning.hpp — reading a model's conditioning input (a diffusion U-Net's
// timestep embedding, a class embedding) inside conditioned(condition, model) (graph.hpp).
//
// The condition block runs first on its own input and its output stays alive while the model runs
// (sim::encoder_output, as an encoder_decoder's memory); `condition()` starts a branch from it, so
// `parallel(merge_kind::add, sequential(), sequential(condition(), silu(), linear(C), reshape(C, 1, 1)))`
// is a block's `h + self.time_mlp(emb)[:, :, None, None]`. Every branch's gradient for it is summed
// into one, as autograd does for a tensor read by many ops.
#pragma once
#include <gpubudget/base/diagnostics.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// The conditioning tensor itself (no new tensor); `width` > 0: its last dimension, checked.
struct condition_op {
  std::int64_t width = {};
};

namespace detail {
[[noreturn]] inline void condition_outside_conditioned() {
  fail("gpubudget: condition() outside the model of a conditioned(condition, model) (no conditioning tensor to read)");
}
}  // namespace detail

template <>
struct op_traits<condition_op> {
  static constexpr const char* name = "condition";
  static constexpr detail::value lower(detail::layer_ctx& c, const condition_op& op, const detail::value&) {
    const detail::value& memory = c.s.encoder_output;
    if (memory.id < 0) detail::condition_outside_conditioned();
    if (op.width > 0 && (memory.s.rank < 1 || memory.s.last() != op.width)) detail::shape_mismatch_between_layers();
    c.s.retain(memory.id);
    return memory;
  }
  static constexpr std::int64_t flops(const condition_op&, const shape&, const shape&) { return 0; }  // a reference, no arithmetic
};

/// Starts a branch from the conditioning tensor of the enclosing conditioned(condition, model):
/// its output, whatever the branch's input.
constexpr layer condition(std::int64_t width = 0) {
  if (width < 0) detail::invalid_layer_argument();
  return as_layer(condition_op{width});
}

}  // namespace gpubudget
