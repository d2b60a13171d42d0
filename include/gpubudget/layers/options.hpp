// gpubudget/layers/options.hpp — named arguments shared by layer factories.
#pragma once
#include <cstdint>

#include <gpubudget/units.hpp>

namespace gpubudget {

struct stride { std::int64_t value = 1; constexpr explicit stride(std::int64_t v) : value(v) {} };
struct padding { std::int64_t value = 0; constexpr explicit padding(std::int64_t v) : value(v) {} };
struct dilation { std::int64_t value = 1; constexpr explicit dilation(std::int64_t v) : value(v) {} };
struct groups { std::int64_t value = 1; constexpr explicit groups(std::int64_t v) : value(v) {} };
struct output_padding { std::int64_t value = 0; constexpr explicit output_padding(std::int64_t v) : value(v) {} };
/// A 2-D convolution's kernel and padding along its last dimension (W) where they differ from
/// H's: conv2d(c, 1, kernel_w(7), padding_w(3)) is nn.Conv2d(..., (1, 7), padding=(0, 3)).
struct kernel_w { std::int64_t value = 0; constexpr explicit kernel_w(std::int64_t v) : value(v) {} };
struct padding_w { std::int64_t value = 0; constexpr explicit padding_w(std::int64_t v) : value(v) {} };
/// A 3-D convolution's own kernel, padding and stride along T (dimension 1 of [C, T, H, W]), H and
/// W sharing the others: conv3d(64, 7, stride(2), padding(3), kernel_t(3), stride_t(1), padding_t(1))
/// is nn.Conv3d(3, 64, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3)) (torchvision's r3d_18 stem).
struct kernel_t { std::int64_t value = 0; constexpr explicit kernel_t(std::int64_t v) : value(v) {} };
struct padding_t { std::int64_t value = 0; constexpr explicit padding_t(std::int64_t v) : value(v) {} };
struct stride_t { std::int64_t value = 1; constexpr explicit stride_t(std::int64_t v) : value(v) {} };
/// Number of attention heads.
/// How many trailing per-sample dimensions a norm normalizes (nn.LayerNorm([C, H, W]): 3).
struct over_last { std::int64_t value = 1; constexpr explicit over_last(std::int64_t v) : value(v) {} };
struct heads { std::int64_t value = 1; constexpr explicit heads(std::int64_t v) : value(v) {} };
/// Key/value heads for grouped-query attention (defaults to `heads`).
struct kv_heads { std::int64_t value = 0; constexpr explicit kv_heads(std::int64_t v) : value(v) {} };
/// Length of the key/value sequence for cross-attention (defaults to the query length).
struct kv_tokens { std::int64_t value = 0; constexpr explicit kv_tokens(std::int64_t v) : value(v) {} };
/// The width of the memory a cross_attention reads when it is not the query's (Stable Diffusion's
/// text states: 768 beside 320-1280 wide feature maps); its keys and values project from it.
struct kv_width { std::int64_t value = 0; constexpr explicit kv_width(std::int64_t v) : value(v) {} };
/// Dropout on the attention probabilities, in percent (GPT-2's attn_pdrop, BERT's
/// attention_probs_dropout_prob, nn.MultiheadAttention(dropout=...)); 0 = none.
struct attention_dropout { std::int64_t percent = 0; constexpr explicit attention_dropout(std::int64_t p) : percent(p) {} };
/// Channels per attention head when heads · head_dim ≠ width (transformers' head_dim, T5's d_kv).
struct head_dim { std::int64_t value = 0; constexpr explicit head_dim(std::int64_t v) : value(v) {} };
/// The q, k, v projections' bias apart from the output projection's: qkv_bias(true) with no_bias
/// keeps biases on q, k, v only (Qwen2's attention); qkv_bias(false) drops them while the output
/// projection keeps its own (timm's Attention(qkv_bias=False), vit-pytorch's to_qkv).
struct qkv_bias { bool value = true; constexpr explicit qkv_bias(bool v = true) : value(v) {} };
/// Rotary attention whose q, k and v come from one packed projection (Phi3Attention.qkv_proj):
/// the same weights, but under autocast one 16-bit copy of the input instead of three, and SDPA's
/// saved v is a view of the whole packed output (op_rules.md L6).
struct fused_qkv_t {};
inline constexpr fused_qkv_t fused_qkv{};
/// Layer without a bias term.
struct no_bias_t {};
inline constexpr no_bias_t no_bias{};
/// A norm without learned weight and bias (nn.LayerNorm(D, elementwise_affine=False)).
struct no_affine_t {};
inline constexpr no_affine_t no_affine{};
/// Pooling with ceil_mode=True: the last window may run past the map's end (but starts inside it).
struct keepdim_t {};
inline constexpr keepdim_t keepdim{};

struct ceil_mode_t {};
inline constexpr ceil_mode_t ceil_mode{};
/// Depthwise convolution: groups = input channels.
struct depthwise_t {};
inline constexpr depthwise_t depthwise{};

// base_weights (how a frozen base weight is stored) is a storage format: units.hpp, beside dtype.

}  // namespace gpubudget
