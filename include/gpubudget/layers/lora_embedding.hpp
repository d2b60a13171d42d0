// gpubudget/layers/lora_embedding.hpp — a LoRA adapter on a frozen nn.Embedding (PEFT's
// lora.Embedding: peft/tuners/lora/layer.py, Embedding.update_layer and forward).
//
// PEFT keeps the adapter as two parameters, lora_embedding_A [r, num_embeddings] and
// lora_embedding_B [dim, r], and runs
//     result = base_layer(x)
//     after_A = F.embedding(x, lora_embedding_A.T, ...)      # [..., r]
//     result = result + (after_A @ lora_embedding_B.T) * scaling
// without lora_dropout (Embedding.forward never calls it). What autograd keeps follows from the
// ops: the frozen base keeps nothing (the ids need no gradient); the adapter's embedding keeps the
// ids, the matmul after_A (and B's view); the scalar multiply and the add keep nothing. A's
// gradient leaves the embedding's backward as a dense [num, r] buffer seen through `.T`, whose
// strides are not the parameter's, so AccumulateGrad copies it into a .grad of the parameter's
// layout (accumulate_grad.h, clone_obey_contract): both exist for a moment.
#pragma once
#include <cstdint>

#include <gpubudget/detail/op_record.hpp>
#include <gpubudget/layers/adapters.hpp>
#include <gpubudget/layers/dense.hpp>
#include <gpubudget/layers/lora_projection.hpp>

namespace gpubudget {

/// A frozen nn.Embedding(num_embeddings, dim) with a LoRA adapter of rank `rank`; the frozen
/// table stored as `base` (a transformers family's 16-bit base; bitsandbytes never quantizes it).
struct lora_embedding_op {
  std::int64_t num_embeddings = {};
  std::int64_t dim = {};
  std::int64_t rank = {};
  base_weights base = {};
};

template <>
struct op_traits<lora_embedding_op> {
  static constexpr const char* name = "lora_embedding";
  static constexpr detail::value lower(detail::layer_ctx& c, const lora_embedding_op& op, const detail::value& x) {
    using namespace detail;
    // the rank of the adapted table [num_embeddings, dim]
    if (op.rank < 1 || op.rank > op.num_embeddings || op.rank > op.dim) lora_rank_must_be_positive_and_at_most_the_layer_width();
    if (is_quantized(op.base)) invalid_layer_argument();  // bitsandbytes quantizes Linear layers only
    // the frozen table, counted as a frozen base as the transformers families' frozen_embedding is
    value base_out = op_traits<frozen_embedding_op>::lower(c, frozen_embedding_op{op.num_embeddings, op.dim, op.base, false}, x);
    layer_ctx ad = c.sub(1);
    const auto table_a = checked_mul(op.num_embeddings, op.rank);
    ad.add_param(table_a);
    shape rows = x.s;
    rows.dim[static_cast<std::size_t>(rows.rank++)] = op.rank;
    value a = with_params(ad, x, rows, ad.param_type(), table_a, /*saves_input=*/true);
    // A's dense gradient and the copy AccumulateGrad makes in the parameter's layout
    ad.s.backward_temp(ad.s.record_of(a), bytes_of(table_a, ad.param_type()), true);
    value b = detail::linear_op(ad, a, op.dim, false, 1);  // after_A @ lora_embedding_B.T
    c.s.release(a);
    c.absorb(ad, 1);
    return add_scaled_update(c.s, base_out, b);
  }
  /// The adapter's matmul (the lookups do no arithmetic).
  static constexpr std::int64_t flops(const lora_embedding_op& op, const shape&, const shape& out) { return 2 * op.rank * out.numel(); }
};

/// PEFT's lora.Embedding on a frozen nn.Embedding(num_embeddings, dim) over int64 ids, the frozen
/// table stored as `base` (same: the precision's parameter type; fp32, fp16, bf16).
constexpr layer lora_embedding(std::int64_t num_embeddings, std::int64_t dim, std::int64_t rank, base_weights base = base_weights::same) {
  return as_layer(lora_embedding_op{num_embeddings, dim, rank, base});
}

}  // namespace gpubudget
