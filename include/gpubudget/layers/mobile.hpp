// gpubudget/layers/mobile.hpp — squeeze-excitation, the per-channel gate of torchvision's
// mobile networks (MobileNetV3, EfficientNet). Their in-place activations (ReLU6, Hardswish,
// SiLU) and in-place dropout are activations (activation.hpp).
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/activation.hpp>
#include <gpubudget/layers/conv.hpp>

namespace gpubudget {

/// Inner activation and gate of a squeeze-excitation block.
enum class se_activation : std::int64_t { relu = 0, silu_inplace = 1 };
enum class se_gate : std::int64_t { sigmoid = 0, hardsigmoid = 1 };

/// torchvision.ops.SqueezeExcitation(C, squeeze): on x [C, H, W],
/// scale = gate(fc2(act(fc1(adaptive_avg_pool2d(x, 1))))) with 1×1 convolutions (with bias),
/// output scale * x. MobileNetV3: ReLU + Hardsigmoid; EfficientNet: SiLU(inplace) + Sigmoid.
struct squeeze_excitation_op {
  std::int64_t squeeze_channels = {};
  se_activation act = {};
  se_gate gate = {};
};

namespace detail {
// torchvision/ops/misc.py SqueezeExcitation's 1×1 convolutions (parts 0 and 1 of the lowering)
inline constexpr named_part squeeze_excitation_parts[] = {{"fc1", 1}, {"fc2", 2}};
}  // namespace detail

template <>
struct op_traits<squeeze_excitation_op> {
  static constexpr const char* name = "squeeze_excitation";
  /// fc1 and fc2, which train_only selects one by one (`features.4.block.2.fc1`).
  static constexpr const char* part_name(const squeeze_excitation_op&, std::int32_t k, std::uint8_t& parts) {
    return detail::nth_part(detail::squeeze_excitation_parts, k, parts);
  }
  static constexpr detail::value lower(detail::layer_ctx& c, const squeeze_excitation_op& op, const detail::value& x) {
    auto& s = c.s;
    if (x.s.rank != 3) detail::tensor_rank_unsupported();
    const auto ch = x.s[0], sq = op.squeeze_channels;
    if (sq <= 0) detail::invalid_layer_argument();
    // adaptive_avg_pool2d(x, 1): keeps its whole input (op_rules.md §0.7)
    detail::value pooled = detail::pointwise(s, x, make_shape(ch, 1, 1), x.type, detail::keeps::input);
    detail::value h = detail::on_part(c, 0, [&](detail::layer_ctx& pc) {  // fc1 keeps its [C,1,1] input
      return detail::convolution(pc, pooled, detail::make_conv(false, 2, sq, 1), 0);
    });
    s.release(pooled);
    detail::value a = op.act == se_activation::silu_inplace ? detail::inplace_keeping_copy(s, h)
                                                            : detail::keep_output_activation(s, h);  // nn.ReLU()
    s.release(h);
    detail::value g = detail::on_part(c, 1, [&](detail::layer_ctx& pc) { return detail::convolution(pc, a, detail::make_conv(false, 2, ch, 1), 1); });
    s.release(a);
    // sigmoid keeps its output, hardsigmoid its input
    detail::value scale = op.gate == se_gate::sigmoid ? detail::keep_output_activation(s, g) : detail::keep_input_activation(s, g);
    s.release(g);
    // scale * x: keeps both; the gate's gradient is computed at x's size, then reduced
    detail::value y = detail::broadcast_multiply(s, x, scale, x.s);
    s.release(scale);
    return y;
  }
};

constexpr layer squeeze_excitation(std::int64_t squeeze_channels, se_activation act = se_activation::relu,
                                   se_gate gate = se_gate::sigmoid) {
  return as_layer(squeeze_excitation_op{squeeze_channels, act, gate});
}

}  // namespace gpubudget
