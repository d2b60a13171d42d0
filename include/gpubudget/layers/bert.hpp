// gpubudget/layers/bert.hpp — what transformers' BertEmbeddings adds to the word embeddings:
// token-type embeddings and learned absolute positions.
//
//   embeddings = inputs_embeds + token_type_embeddings(token_type_ids)   (out of place)
//   embeddings += position_embeddings(position_ids)                      (in place)
//
// token_type_ids and position_ids default to slices of registered buffers (expanded over the
// batch: views, no memory). What autograd keeps: each embedding lookup keeps only its int64
// indices (the buffers: nothing new); the adds keep nothing. The token-type lookup is a new
// [B, T, D] tensor alive during the add; the position lookup is [1, T, D]. In backward the
// tables get dense gradients (embedding_dense_backward) and the positions' gradient is first
// summed over the batch ([1, T, D]).
#pragma once
#include <gpubudget/detail/op_record.hpp>

namespace gpubudget {

/// BertEmbeddings after the word lookup on [T, D]: + token types (`type_vocab` rows; the
/// default all-zero ids) then += positions (`max_positions` rows; T ≤ max_positions).
struct bert_embeddings_op {
  std::int64_t type_vocab = {};
  std::int64_t max_positions = {};
};

namespace detail {
// transformers' BertEmbeddings: its two tables are modules of their own, which train_only (and
// --freeze-all-but) select one by one: bert.embeddings.token_type_embeddings (part 0) and
// bert.embeddings.position_embeddings (part 1)
inline constexpr named_part bert_embedding_tables[] = {{"token_type_embeddings", 1}, {"position_embeddings", 2}};
}  // namespace detail

template <>
struct op_traits<bert_embeddings_op> {
  static constexpr const char* name = "bert_embeddings";
  static constexpr const char* part_name(const bert_embeddings_op&, std::int32_t k, std::uint8_t& parts) {
    return detail::nth_part(detail::bert_embedding_tables, k, parts);
  }
  static constexpr detail::value lower(detail::layer_ctx& c, const bert_embeddings_op& op, const detail::value& x) {
    using namespace detail;
    auto& s = c.s;
    if (x.s.rank != 2) shape_mismatch_between_layers();
    const auto T = x.s[0], D = x.s[1], types = op.type_vocab, positions = op.max_positions;
    if (types <= 0 || positions <= 0) invalid_layer_argument();
    if (T > positions) sequence_longer_than_positions();
    const dtype emb_t = c.param_type();
    // inputs_embeds + token_type_embeddings: the lookup's [B, T, D] output lives through the add
    value y = on_part(c, 0, [&](layer_ctx& pc) { return add_parameter(pc, x, x.s, checked_mul(types, D), 0); });
    s.transient(s.bytes_of_value(x.s, emb_t));
    // embeddings += position_embeddings: in place; the [1, T, D] lookup lives through the add
    return on_part(c, 1, [&](layer_ctx& pc) {
      const auto rows = bytes_of(checked_mul(T, D), emb_t);
      pc.add_param(checked_mul(positions, D));
      s.transient(rows, true);
      value z{y.id, y.s, y.type, pc.records(y)};  // same storage: takes over y's reference
      if (auto n = s.record(z); n >= 0) {
        s.grad_to(n, y, true);
        pc.param_grads(n, checked_mul(positions, D), 1);
        if (pc.trainable) s.backward_temp(n, rows, true);  // grad.sum(0) for the broadcast [1, T, D] operand
      }
      return z;
    });
  }
};

constexpr layer bert_embeddings(std::int64_t type_vocab = 2, std::int64_t max_positions = 512) {
  return as_layer(bert_embeddings_op{type_vocab, max_positions});
}

}  // namespace gpubudget
