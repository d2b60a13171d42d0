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
// With use_dora=True (PEFT's DoRA: dora_embedding below) a trainable magnitude per embedding
// dimension rescales the base output and the update.
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
  flag dora = {};  ///< PEFT's use_dora: a trainable magnitude per embedding dimension (dora_embedding)
};

namespace detail {
/// PEFT's DoRA on an embedding (use_dora=True): peft/tuners/lora/variants.py
/// DoraEmbeddingVariant.forward calls dora.py DoraEmbeddingLayer.forward (fan_in_fan_out=True:
/// the norm runs over the table's rows, one per embedding dimension) with A = lora_embedding_A.T,
/// B = lora_embedding_B.T:
///     lora_weight = (A @ B).T;  weight_norm = ||W.T + scaling·lora_weight.detach()||_row, detached
///     mag_norm_scale = magnitude / weight_norm      # magnitude [dim]: fp32, trains
///     result_dora = mag_norm_scale·(embedding(x, A) @ B)·scaling
///     result = mag_norm_scale·result + result_dora  # keeps the frozen table's output
/// then Embedding.forward's result.to(torch_result_dtype). `a`: embedding(x, A) (consumed),
/// `base_out`: the frozen table's output (consumed); `ad`: the adapter's context (B is its part 1);
/// `lora_weight`: dora_lora_weight's storage, made before `a` as PEFT's forward makes it.
constexpr value dora_embedding(layer_ctx& c, layer_ctx& ad, const value& a, const value& base_out, std::int32_t lora_weight) {
  auto& s = c.s;
  const auto dim = base_out.s.last();
  value b = detail::linear_op(ad, a, dim, false, 1);  // after_A @ lora_embedding_B.T
  s.release(a);
  c.absorb(ad, 1);
  value lora = dora_scaled(s, b, dim);
  dora_magnitude(c, s.record_of(lora), dim, 3);
  s.release(b);
  value scaled = pointwise(s, lora, lora.s, lora.type, keeps::nothing, scalar_operand_saved(s));  // · scaling
  s.release(lora), s.release(lora_weight);  // DoRA's forward returns
  value kept = dora_scaled(s, base_out, dim);  // mag_norm_scale·result
  value y = add(s, kept, scaled);
  s.release(kept), s.release(scaled);
  value back = cast_to(s, y, base_out.type);
  s.release(y), s.release(base_out);
  return back;
}
}  // namespace detail

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
    const std::int32_t lora_weight = op.dora ? dora_lora_weight(c, checked_mul(op.num_embeddings, op.dim), c.matmul_type(c.param_type()), c.stored_type(op.base)) : -1;
    layer_ctx ad = c.sub(1);
    const auto table_a = checked_mul(op.num_embeddings, op.rank);
    ad.add_param(table_a);
    shape rows = x.s;
    rows.dim[static_cast<std::size_t>(rows.rank++)] = op.rank;
    value a = with_params(ad, x, rows, ad.param_type(), table_a, /*saves_input=*/true);
    // A's dense gradient and the copy AccumulateGrad makes in the parameter's layout
    ad.s.backward_temp(ad.s.record_of(a), bytes_of(table_a, ad.param_type()), true);
    if (op.dora) return dora_embedding(c, ad, a, base_out, lora_weight);
    value b = detail::linear_op(ad, a, op.dim, false, 1);  // after_A @ lora_embedding_B.T
    c.s.release(a);
    c.absorb(ad, 1);
    return add_scaled_update(c.s, base_out, b);
  }
  /// The adapter's matmul (the lookups do no arithmetic).
  static constexpr std::int64_t flops(const lora_embedding_op& op, const shape&, const shape& out) { return 2 * op.rank * out.numel(); }
};

/// PEFT's lora.Embedding on a frozen nn.Embedding(num_embeddings, dim) over int64 ids, the frozen
/// table stored as `base` (same: the precision's parameter type; fp32, fp16, bf16); `dora`:
/// PEFT's use_dora (dora_embedding).
constexpr layer lora_embedding(std::int64_t num_embeddings, std::int64_t dim, std::int64_t rank, base_weights base = base_weights::same,
                               bool dora = false) {
  return as_layer(lora_embedding_op{num_embeddings, dim, rank, base, dora});
}

}  // namespace gpubudget
