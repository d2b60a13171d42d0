// gpubudget/layers/view.hpp — shape-only ops and small reductions.
//
// flatten / reshape / transpose / permute / select / chunk are views: no new storage, and a view keeps
// its whole base alive as long as anyone (a variable or a saved tensor) holds it.
// `transpose(..., contiguous)` adds the copy that `.contiguous()` makes. Per-sample dimensions:
// dimension 0 is the first dimension after the batch.
#pragma once
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// Flattens per-sample dimensions from `start` on (nn.Flatten() is start 0).
struct flatten_op {
  std::int64_t start = {};
};

template <>
struct op_traits<flatten_op> {
  static constexpr const char* name = "flatten";
  static constexpr detail::value lower(detail::layer_ctx& c, const flatten_op& op, const detail::value& x) {
    if (op.start < 0 || op.start >= x.s.rank) detail::invalid_layer_argument();
    shape out{};
    out.rank = static_cast<int>(op.start) + 1;
    for (int i = 0; i < op.start; ++i) out[i] = x.s[i];
    std::int64_t rest = 1;
    for (int i = static_cast<int>(op.start); i < x.s.rank; ++i) rest = checked_mul(rest, x.s[i]);
    out[static_cast<int>(op.start)] = rest;
    return c.s.view(x, out);
  }
  static constexpr std::int64_t flops(const flatten_op&, const shape&, const shape&) { return 0; }
};

constexpr layer flatten(std::int64_t start = 0) { return as_layer(flatten_op{start}); }

/// Reshapes the per-sample shape (same element count): a view.
struct reshape_op {
  dims_field dims = {};
};

template <>
struct op_traits<reshape_op> {
  static constexpr const char* name = "reshape";
  static constexpr detail::value lower(detail::layer_ctx& c, const reshape_op& op, const detail::value& x) {
    const shape out = op.dims.to_shape();
    if (out.numel() != x.s.numel()) detail::reshape_changes_element_count();
    return c.s.view(x, out);
  }
  static constexpr std::int64_t flops(const reshape_op&, const shape&, const shape&) { return 0; }
};

template <class... D>
constexpr layer reshape(D... dims) {
  static_assert(sizeof...(D) >= 1 && sizeof...(D) <= 5, "reshape(...) takes 1 to 5 dimensions");
  return as_layer(reshape_op{dims_field::of(dims...)});
}

/// Swaps two per-sample dimensions; `contiguous` adds the copy `.contiguous()` makes.
struct transpose_op {
  std::int64_t dim0 = {};
  std::int64_t dim1 = {};
  flag contiguous = {};
};

template <>
struct op_traits<transpose_op> {
  static constexpr const char* name = "transpose";
  static constexpr detail::value lower(detail::layer_ctx& c, const transpose_op& op, const detail::value& x) {
    if (op.dim0 < 0 || op.dim1 < 0 || op.dim0 >= x.s.rank || op.dim1 >= x.s.rank) detail::invalid_layer_argument();
    shape out = x.s;
    out[static_cast<int>(op.dim0)] = x.s[static_cast<int>(op.dim1)];
    out[static_cast<int>(op.dim1)] = x.s[static_cast<int>(op.dim0)];
    // the gradient reaches x through the transposed view, with .contiguous() after it too
    if (op.dim0 != op.dim1 && x.s[static_cast<int>(op.dim0)] > 1 && x.s[static_cast<int>(op.dim1)] > 1) c.s.strided_view_of(x);
    if (op.contiguous) return detail::copy(c.s, x, out);
    detail::value y = c.s.view(x, out);
    const bool last_two = op.dim0 + op.dim1 == 2 * x.s.rank - 3;  // only rank − 2 and rank − 1 add up to it
    y.transposed = last_two ? !x.transposed : x.transposed;
    return y;
  }
  static constexpr std::int64_t flops(const transpose_op&, const shape&, const shape&) { return 0; }
};

constexpr layer transpose(std::int64_t d0, std::int64_t d1, bool contiguous = false) { return as_layer(transpose_op{d0, d1, contiguous}); }

/// Moves the batch dimension between first and second: x.transpose(0, 1) or x.permute(1, 0, 2) between
/// batch-first [B, L, D] and sequence-first [L, B, D] tokens (OpenAI CLIP's text tower around its
/// nn.MultiheadAttention blocks). The per-sample shape stays; the view is not contiguous, or is again
/// when x was such a view (`strided` toggles: LayerNorm copies a strided input, op_rules.md CT10, and
/// an elementwise op's output follows its first input's layout). `contiguous` adds the copy
/// `.contiguous()` makes. Its gradient is the transposed view of the output's: copied where x's
/// producer needs it contiguous, as transpose's.
struct batch_transpose_op {
  flag contiguous = {};
};

template <>
struct op_traits<batch_transpose_op> {
  static constexpr const char* name = "batch_transpose";
  static constexpr detail::value lower(detail::layer_ctx& c, const batch_transpose_op& op, const detail::value& x) {
    const bool moves = c.s.batch > 1 && x.s.numel() > 1;  // a dimension of 1 leaves the layout as it was
    if (moves) c.s.strided_view_of(x);
    if (op.contiguous && (moves != x.strided)) {  // not contiguous after the transpose: .contiguous() copies
      detail::value y = detail::copy(c.s, x, x.s);
      y.strided = false;
      return y;
    }
    detail::value y = c.s.view(x, x.s);
    y.strided = moves != x.strided;
    return y;
  }
  static constexpr std::int64_t flops(const batch_transpose_op&, const shape&, const shape&) { return 0; }
};

constexpr layer batch_transpose(bool contiguous = false) { return as_layer(batch_transpose_op{contiguous}); }

/// Permutes the per-sample dimensions (a view), e.g. permute(1, 2, 0) for [C,H,W] -> [H,W,C].
struct permute_op {
  dims_field order = {};  ///< output dimension i is input dimension order.d[i]
  flag contiguous = {};   ///< then .contiguous(): a copy (diffusers' `.permute(0, 3, 1, 2).contiguous()`)
};

template <>
struct op_traits<permute_op> {
  static constexpr const char* name = "permute";
  static constexpr detail::value lower(detail::layer_ctx& c, const permute_op& op, const detail::value& x) {
    if (op.order.rank != x.s.rank) detail::shape_mismatch_between_layers();
    shape out = x.s;
    std::int64_t last_moved = -1;
    bool strided = false;  // dimensions longer than 1 leave their order
    for (int i = 0; i < x.s.rank; ++i) {
      const auto from = op.order.d[i];
      if (from < 0 || from >= x.s.rank) detail::invalid_layer_argument();
      for (int j = 0; j < i; ++j) if (op.order.d[j] == from) detail::permute_repeats_an_axis();
      out[i] = x.s[static_cast<int>(from)];
      if (out[i] > 1) strided = strided || from < last_moved, last_moved = from;
    }
    if (strided) c.s.strided_view_of(x);
    if (op.contiguous) return strided ? detail::copy(c.s, x, out) : c.s.view(x, out);  // contiguous already: itself
    detail::value y = c.s.view(x, out);
    // the last two dimensions swapped, the others in place: a transposed GEMM operand
    const auto r = x.s.rank;
    bool others_in_place = r >= 2 && op.order.d[r - 2] == r - 1 && op.order.d[r - 1] == r - 2;
    for (int i = 0; i + 2 < r; ++i) others_in_place = others_in_place && op.order.d[i] == i;
    y.transposed = others_in_place ? !x.transposed : false;
    return y;
  }
  static constexpr std::int64_t flops(const permute_op&, const shape&, const shape&) { return 0; }
};

template <class... D>
constexpr layer permute(D... order) {
  static_assert(sizeof...(D) >= 2 && sizeof...(D) <= 5, "permute(...) takes 2 to 5 dimensions");
  return as_layer(permute_op{dims_field::of(order...)});
}
/// x.permute(order...).contiguous(): a copy in the new order (a view where the order keeps the layout).
template <class... D>
constexpr layer contiguous_permute(D... order) {
  static_assert(sizeof...(D) >= 2 && sizeof...(D) <= 5, "contiguous_permute(...) takes 2 to 5 dimensions");
  return as_layer(permute_op{dims_field::of(order...), true});
}

/// `x[:, index]` along per-sample dimension 0 (e.g. a class token): a view.
struct select_token_op {
  std::int64_t index = {};
};

template <>
struct op_traits<select_token_op> {
  static constexpr const char* name = "select";
  static constexpr detail::value lower(detail::layer_ctx& c, const select_token_op& op, const detail::value& x) {
    if (x.s.rank < 2) detail::tensor_rank_unsupported();
    if (op.index < 0 || op.index >= x.s[0]) detail::invalid_layer_argument();
    shape out{};
    out.rank = x.s.rank - 1;
    for (int i = 1; i < x.s.rank; ++i) out[i - 1] = x.s[i];
    // A view; in backward its gradient is scattered into a zero tensor of the whole input
    // (SelectBackward), which the simulator does when a partial gradient reaches a storage.
    return c.s.view(x, out);
  }
  static constexpr std::int64_t flops(const select_token_op&, const shape&, const shape&) { return 0; }
};

constexpr layer select_token(std::int64_t index = 0) { return as_layer(select_token_op{index}); }

/// `x[..., start:start + length]` along per-sample dimension `dim` (locuslab/TCN's Chomp1d:
/// `x[:, :, :-k].contiguous()`): a view, which `contiguous` copies; in backward its gradient is
/// scattered into a zero tensor of the whole input (SliceBackward0), as select's.
struct narrow_op {
  std::int64_t dim = {};
  std::int64_t start = {};
  std::int64_t length = {};
  flag contiguous = {};
};

template <>
struct op_traits<narrow_op> {
  static constexpr const char* name = "narrow";
  static constexpr detail::value lower(detail::layer_ctx& c, const narrow_op& op, const detail::value& x) {
    if (op.dim < 0 || op.dim >= x.s.rank || op.start < 0 || op.length < 1 || op.start + op.length > x.s[static_cast<int>(op.dim)])
      detail::invalid_layer_argument();
    shape out = x.s;
    out[static_cast<int>(op.dim)] = op.length;
    detail::value v = c.s.view(x, out);
    if (!op.contiguous) return v;
    detail::value y = detail::copy(c.s, v, out);
    c.s.release(v);
    return y;
  }
  static constexpr std::int64_t flops(const narrow_op&, const shape&, const shape&) { return 0; }
};

/// x.narrow(dim, start, length) on a per-sample dimension; `contiguous`: then .contiguous(), a copy.
constexpr layer narrow(std::int64_t dim, std::int64_t start, std::int64_t length, bool contiguous = false) {
  return as_layer(narrow_op{dim, start, length, contiguous});
}

/// `x.chunk(count, dim)[index]` along per-sample dimension `dim`: a view of one of `count` equal
/// parts. Autograd's SplitBackward0 holds each chunk's gradient until every chunk's has arrived,
/// then cats them into the whole input's gradient (sim::chunk_view). A chunk is strided (not
/// contiguous) unless only ones stand before `dim`, the batch included.
struct chunk_op {
  std::int64_t count = {};
  std::int64_t index = {};
  std::int64_t dim = {};
};

template <>
struct op_traits<chunk_op> {
  static constexpr const char* name = "chunk";
  static constexpr detail::value lower(detail::layer_ctx& c, const chunk_op& op, const detail::value& x) {
    if (op.dim < 0 || op.dim >= x.s.rank || op.count < 1 || op.index < 0 || op.index >= op.count) detail::invalid_layer_argument();
    const int d = static_cast<int>(op.dim);
    if (x.s[d] % op.count != 0) detail::chunks_do_not_divide_the_dimension();
    shape out = x.s;
    out[d] /= op.count;
    detail::value y = c.s.chunk_view(x, out);
    std::int64_t before = c.s.batch;
    for (int i = 0; i < d; ++i) before *= x.s[i];
    y.strided = x.strided || (op.count > 1 && before > 1);
    return y;
  }
  static constexpr std::int64_t flops(const chunk_op&, const shape&, const shape&) { return 0; }
};

/// x.chunk(count, dim)[index] on per-sample dimension `dim` (default 0, the channels: ShuffleNet
/// V2's `x1, x2 = x.chunk(2, dim=1)` is chunk(2, 0) and chunk(2, 1)); `count` must divide it.
constexpr layer chunk(std::int64_t count, std::int64_t index, std::int64_t dim = 0) { return as_layer(chunk_op{count, index, dim}); }

enum class reduction : std::int64_t { mean, sum, max, var, std_dev };

/// A mean, sum, max (the values of torch.max(x, dim)), variance or standard deviation over
/// per-sample dimension `dim` (removed from the shape, or kept as 1 with `keep`).
struct reduce_over_op {
  std::int64_t dim = {};
  std::int64_t count = 1;  ///< consecutive dimensions reduced from `dim` on (x.mean([2, 3]): 2)
  flag keep = {};          ///< keepdim=True
  reduction kind = {};
};

template <>
struct op_traits<reduce_over_op> {
  static constexpr const char* name(const reduce_over_op& op) {
    constexpr const char* names[] = {"mean", "sum", "max", "var", "std"};
    return names[static_cast<int>(op.kind)];
  }
  static constexpr detail::value lower(detail::layer_ctx& c, const reduce_over_op& op, const detail::value& x) {
    if (op.dim < 0 || op.count < 1 || op.dim + op.count > x.s.rank || (op.kind == reduction::max && op.count != 1)) detail::invalid_layer_argument();
    shape out{};
    out.rank = op.keep ? x.s.rank : x.s.rank - static_cast<int>(op.count);
    for (int i = 0, j = 0; i < x.s.rank; ++i) {
      const bool reduced = i >= op.dim && i < op.dim + op.count;
      if (!reduced || op.keep) out[j++] = reduced ? 1 : x.s[i];
    }
    // sum keeps nothing and its backward expands the gradient (derivatives.yaml sum.dim_IntList:
    // sum_backward, sizes only); max.dim keeps only the int64 indices of the maxima, its backward
    // scatters into zeros of x's size (value_selecting_reduction_backward; measured on the 2.6
    // CPU: x[2,16,8,8] over dim 1 keeps [2,1,8,8] int64); mean: mean_reduce
    if (op.kind == reduction::sum) return detail::reduce(c.s, x, out);
    if (op.kind == reduction::mean) return detail::mean_reduce(c.s, x, out);
    if (op.kind == reduction::var || op.kind == reduction::std_dev) return detail::deviation_reduce(c.s, x, out, op.kind == reduction::std_dev);
    return detail::pointwise(c.s, x, out, x.type, detail::keeps::nothing, bytes_of(checked_mul(c.s.batch, out.numel()), dtype::int64));
  }
};

/// x.mean(dim) over the per-sample dimension `dim` (not kept); `count` consecutive dimensions
/// from it: mean_over(1, 2) on [C, H, W] is x.mean([2, 3]) (MnasNet's global pooling).
constexpr layer mean_over(std::int64_t dim, std::int64_t count = 1) { return as_layer(reduce_over_op{dim, count}); }
/// The same with keepdim=True: mean_over(1, 2, keepdim) on [C, H, W] is x.mean([2, 3],
/// keepdim=True), [C, 1, 1] (the memory is mean's: the shape differs, not what it keeps).
constexpr layer mean_over(std::int64_t dim, std::int64_t count, keepdim_t) { return as_layer(reduce_over_op{dim, count, true}); }
/// x.sum(dim) over per-sample dimensions, as mean_over: keeps nothing on any PyTorch.
constexpr layer sum_over(std::int64_t dim, std::int64_t count = 1) { return as_layer(reduce_over_op{dim, count, false, reduction::sum}); }
constexpr layer sum_over(std::int64_t dim, std::int64_t count, keepdim_t) { return as_layer(reduce_over_op{dim, count, true, reduction::sum}); }
/// x.var(dim) and x.std(dim) over per-sample dimensions, as mean_over (the correction, unbiased
/// or not, changes no byte): var keeps x, std x and its result; backward holds x - mean beside
/// x's gradient (a LayerNorm or an instance norm written out).
constexpr layer var_over(std::int64_t dim, std::int64_t count = 1) { return as_layer(reduce_over_op{dim, count, false, reduction::var}); }
constexpr layer var_over(std::int64_t dim, std::int64_t count, keepdim_t) { return as_layer(reduce_over_op{dim, count, true, reduction::var}); }
constexpr layer std_over(std::int64_t dim, std::int64_t count = 1) { return as_layer(reduce_over_op{dim, count, false, reduction::std_dev}); }
constexpr layer std_over(std::int64_t dim, std::int64_t count, keepdim_t) { return as_layer(reduce_over_op{dim, count, true, reduction::std_dev}); }
/// torch.max(x, dim)[0], x.max(dim).values over one per-sample dimension (CBAM's channel max).
constexpr layer max_over(std::int64_t dim) { return as_layer(reduce_over_op{dim, 1, false, reduction::max}); }
constexpr layer max_over(std::int64_t dim, keepdim_t) { return as_layer(reduce_over_op{dim, 1, true, reduction::max}); }

}  // namespace gpubudget
