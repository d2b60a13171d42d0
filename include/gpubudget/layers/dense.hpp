// gpubudget/layers/dense.hpp — linear layers, embeddings and learned positions.
//
// PyTorch 1.13: `F.linear` is addmm for 2-D inputs and matmul + add_ for more dimensions
// (contiguous inputs fold into a view, no copy). The node saves its input (for the weight's
// gradient) and the weight (a parameter, not counted as an activation). Backward allocates the
// input's gradient and the weight/bias gradients.
#pragma once
#include <gpubudget/detail/layer_input.hpp>
#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/options.hpp>

namespace gpubudget {

/// nn.Linear(in, out_features) with `in` taken from the input's last dimension; `tied`: the
/// weight belongs to an earlier layer (counted there; see tied_linear).
struct linear_op {
  std::int64_t out_features = {};
  flag bias = {};
  flag tied = {};
};

template <>
struct op_traits<linear_op> {
  static constexpr const char* name(const linear_op& op) { return op.tied ? "linear (tied)" : "linear"; }
  static constexpr detail::value lower(detail::layer_ctx& c, const linear_op& op, const detail::value& x) {
    return detail::linear_op(c, x, op.out_features, op.bias, 0, op.tied);
  }
  static constexpr std::int64_t flops(const linear_op&, const shape& in, const shape& out) {
    return 2 * in.last() * out.numel();
  }
  /// A tied linear reads the embedding's weight (owns none); a weight of its own is shaped by out_features.
  static constexpr std::int64_t weight_signature(const linear_op& op) { return op.tied ? -1 : op.out_features; }
};

/// nn.Linear(in, out) with `in` taken from the input's last dimension.
constexpr layer linear(std::int64_t out_features) { return as_layer(linear_op{out_features, true, false}); }
constexpr layer linear(std::int64_t out_features, no_bias_t) { return as_layer(linear_op{out_features, false, false}); }
/// A linear layer whose weight belongs to an earlier layer (e.g. a language-model head tied to
/// the token embedding): wrap both in `shared(id, ...)` with the same id; `out_features` is
/// the tied weight's row count.
constexpr layer tied_linear(std::int64_t out_features) { return as_layer(linear_op{out_features, false, true}); }

/// The bias of a linear layer whose weight is tied (transformers' BertLMPredictionHead: `decoder`
/// takes the word embeddings' weight, `decoder.bias` is a [vocab] parameter of its own; place
/// this right after the shared(id, tied_linear(vocab))). The bias is added by the same addmm:
/// no tensor of its own, nothing saved; its gradient is the output's summed over the tokens.
struct tied_linear_bias_op {
  std::int64_t features = {};
};

template <>
struct op_traits<tied_linear_bias_op> {
  static constexpr const char* name = "linear bias (tied weight)";
  static constexpr detail::value lower(detail::layer_ctx& c, const tied_linear_bias_op& op, const detail::value& x) {
    if (x.s.rank < 1 || x.s.last() != op.features) detail::shape_mismatch_between_layers();
    c.add_param(op.features);
    detail::value y = c.s.view(x, x.s);  // the addmm's own output
    if (auto n = c.s.record(y); n >= 0) {
      c.s.grad_to(n, x);
      c.param_grads(n, op.features, 0);
    }
    return y;
  }
  static constexpr std::int64_t flops(const tied_linear_bias_op&, const shape&, const shape& out) { return out.numel(); }
};

constexpr layer tied_linear_bias(std::int64_t features) { return as_layer(tied_linear_bias_op{features}); }

/// `x @ W.t()` on an earlier layer's weight W [out_features, in] (minGPT's head on the token
/// embedding, measure.py's GPT2): as tied_linear, except that under autocast the 16-bit copy
/// is of the transposed view, so W's gradient arrives through a view (TBackward), which the
/// autograd engine sums with W's other gradient out of place (op_rules.md L5).
struct transposed_tied_linear_op {
  std::int64_t out_features = {};
};

template <>
struct op_traits<transposed_tied_linear_op> {
  static constexpr const char* name = "linear (tied, transposed)";
  static constexpr detail::value lower(detail::layer_ctx& c, const transposed_tied_linear_op& op, const detail::value& x) {
    detail::value y = detail::linear_op(c, x, op.out_features, false, 0, true);
    if (const auto n = c.s.record_of(y); n >= 0 && c.amp() && c.s.replay_cursor < 0) c.s.node(n).cast_grad_through_view = true;
    return y;
  }
  static constexpr std::int64_t flops(const transposed_tied_linear_op& op, const shape& in, const shape& out) {
    return op_traits<linear_op>::flops(linear_op{op.out_features, false, true}, in, out);
  }
  static constexpr std::int64_t weight_signature(const transposed_tied_linear_op&) { return -1; }  // the embedding's weight
};
/// x @ W.t() with W an earlier layer's weight (wrap both in `shared(id, ...)`, as tied_linear).
constexpr layer transposed_tied_linear(std::int64_t out_features) { return as_layer(transposed_tied_linear_op{out_features}); }

/// nn.Embedding(num_embeddings, dim) over int64 ids: output [..., dim].
struct embedding_op {
  std::int64_t num_embeddings = {};
  std::int64_t dim = {};
};

template <>
struct op_traits<embedding_op> {
  static constexpr const char* name = "embedding";
  static constexpr detail::value lower(detail::layer_ctx& c, const embedding_op& op, const detail::value& x) {
    if (op.num_embeddings <= 0) detail::vocabulary_size_must_be_positive();
    if (op.dim <= 0) detail::invalid_layer_argument();
    if (x.s.rank >= 5) detail::tensor_rank_unsupported();
    if (x.type != dtype::int64) detail::require_input(false, detail::embedding_needs_token_ids, op.num_embeddings, x.s);
    const auto table = checked_mul(op.num_embeddings, op.dim);
    c.add_param(table);
    shape out = x.s;
    out.dim[static_cast<std::size_t>(out.rank++)] = op.dim;
    // The node keeps the indices (the input: usually the data batch). Backward builds a dense
    // [num, dim] gradient, which becomes .grad, from a contiguous incoming gradient.
    detail::value y = detail::with_params(c, x, out, c.param_type(), table, true);
    if (const auto n = c.s.record_of(y); n >= 0 && c.s.replay_cursor < 0) c.s.node(n).contiguous_grad = true;
    return y;
  }
};

constexpr layer embedding(std::int64_t num_embeddings, std::int64_t dim) { return as_layer(embedding_op{num_embeddings, dim}); }

/// GPT-2's learned positions: x + wpe(arange(T)) with a [context, width] table; `T` is the
/// input's dimension 0 (at most `context`).
struct learned_positions_op {
  std::int64_t context = {};
};

template <>
struct op_traits<learned_positions_op> {
  static constexpr const char* name = "positions";
  static constexpr detail::value lower(detail::layer_ctx& c, const learned_positions_op& op, const detail::value& x) {
    auto& s = c.s;
    if (x.s.rank != 2) detail::shape_mismatch_between_layers();
    const auto T = x.s[0], D = x.s[1];
    if (op.context <= 0) detail::invalid_layer_argument();
    if (T > op.context) detail::sequence_longer_than_positions();
    // pos = arange(T) (int64, one copy for the batch), kept by the embedding's node; wpe(pos) is a
    // [T, D] tensor broadcast over the batch, freed after the add
    const auto pos = bytes_of(T, dtype::int64);
    const auto rows = bytes_of(checked_mul(T, D), dtype::fp32);
    detail::value y = detail::add_parameter(c, x, x.s, checked_mul(op.context, D), 0);
    s.transient(rows, true);
    if (auto n = s.record_of(y); n >= 0) {
      s.save_new(n, pos, 1, true);
      s.backward_temp(n, rows, true);  // grad.sum(0) for the broadcast [T, D] operand
    } else {
      s.transient(pos, true);
    }
    return y;
  }
};

constexpr layer learned_positions(std::int64_t context) { return as_layer(learned_positions_op{context}); }

}  // namespace gpubudget
