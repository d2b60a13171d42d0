// gpubudget/flops.hpp — forward FLOPs of a model, per sample, and how many of them run inside
// checkpointed blocks: what gradient checkpointing costs in recomputation (the planner's
// cost model). Each op's FLOPs are its traits' `flops` (see detail/op_record.hpp); compositions
// add their children (a repeat times its count, a residual or merge one FLOP per output element).
#pragma once
#include <cstdint>

#include <gpubudget/budget.hpp>
#include <gpubudget/devices.hpp>
#include <gpubudget/graph.hpp>
#include <gpubudget/training.hpp>

namespace gpubudget {

struct flop_count {
  std::int64_t total = 0;
  std::int64_t checkpointed = 0;
};

/// Forward FLOPs per sample of the subtree at `i` (input shape `in`), and how many of them run
/// inside checkpointed blocks under `plan` (the outermost checkpoint counts, as in the engine).
template <std::size_t N>
constexpr flop_count subtree_flops(const model_budget<N>& b, std::int32_t i, const shape& in, const training& plan,
                                   bool inside_checkpoint, bool forced) {
  const layer& L = b.records[static_cast<std::size_t>(i)];
  const bool ckpt = !inside_checkpoint && !detail::walker::is_source(L) && (L.flags.checkpoint || forced);
  const bool inside = inside_checkpoint || ckpt;
  flop_count f{};
  const std::int32_t end = i + L.span;
  switch (L.kind) {
    case node_kind::sequence:
    case node_kind::residual:
    case node_kind::repeat:
    case node_kind::encoder_decoder: {  // the decoder starts from its own tokens: `cur` is not its input
      shape cur = in;
      const bool force_children = (i == 0 && plan.checkpoint_all) || (L.kind == node_kind::repeat && plan.checkpoint_blocks);
      for (std::int32_t c = i + 1; c < end; c += b.records[static_cast<std::size_t>(c)].span) {
        const auto part = subtree_flops(b, c, cur, plan, inside, force_children);
        f.total += part.total;
        f.checkpointed += part.checkpointed;
        cur = b.per_record[static_cast<std::size_t>(c)].output;
      }
      if (L.kind == node_kind::repeat) {
        f.total = checked_mul(f.total, L.count);
        f.checkpointed = checked_mul(f.checkpointed, L.count);
      }
      if (L.kind == node_kind::residual) f.total += b.per_record[static_cast<std::size_t>(i)].output.numel();
      break;
    }
    case node_kind::modulated:  // the modulation reads the condition, the body the block's input: both on `in`, no join
    case node_kind::parallel: {
      for (std::int32_t c = i + 1; c < end; c += b.records[static_cast<std::size_t>(c)].span) {
        const auto part = subtree_flops(b, c, in, plan, inside, false);
        f.total += part.total;
        f.checkpointed += part.checkpointed;
      }
      if (L.kind == node_kind::modulated || is_auxiliary(L.merge)) break;  // no join: the heads' outputs go to the loss
      const auto out = b.per_record[static_cast<std::size_t>(i)].output.numel();
      // matmul: 2·k per output element, k the first branch's last dimension ([n, k] @ [k, m])
      // gaussian_latent: 0.5 · logvar, exp, eps · std, + mu (the KL term is the loss's)
      f.total += L.merge == merge_kind::matmul            ? checked_mul(2 * b.per_record[static_cast<std::size_t>(i + 1)].output.last(), out)
                 : L.merge == merge_kind::gaussian_latent ? checked_mul(4, out)
                                                          : out;
      break;
    }
    case node_kind::leaf: f.total = L.op->flops(L, in, b.per_record[static_cast<std::size_t>(i)].output); break;
  }
  if (ckpt) f.checkpointed = f.total;
  return f;
}

/// Forward FLOPs per sample of `m` and the share of them checkpointed under each plan flag.
struct flop_profile {
  std::int64_t total = 0;
  std::int64_t as_declared = 0;        ///< checkpointed() blocks of the model itself
  std::int64_t with_blocks = 0;        ///< ... plus checkpoint_blocks
  std::int64_t with_all = 0;           ///< ... plus checkpoint_all
  std::int64_t with_both = 0;
  std::int64_t input_elements = 0;     ///< per-sample input elements
  std::int64_t parameter_count = 0;
  constexpr std::int64_t checkpointed(const training& p) const {
    if (p.checkpoint_all && p.checkpoint_blocks) return with_both;
    if (p.checkpoint_all) return with_all;
    if (p.checkpoint_blocks) return with_blocks;
    return as_declared;
  }
};

template <std::size_t N>
constexpr flop_profile profile_of(const model<N>& m, const device& dev) {
  const auto b = budget(m, training{.batch = 1, .inference = true}, dev);
  flop_profile p{};
  auto run = [&](bool all, bool blocks) {
    training t{};
    t.checkpoint_all = all;
    t.checkpoint_blocks = blocks;
    return subtree_flops(b, 0, shape{}, t, false, false);
  };
  const auto base = run(false, false);
  p.total = base.total > 0 ? base.total : 1;
  p.as_declared = base.checkpointed;
  p.with_blocks = run(false, true).checkpointed;
  p.with_all = run(true, false).checkpointed;
  p.with_both = run(true, true).checkpointed;
  for (std::size_t i = 0; i < N; ++i)
    if (detail::walker::is_source(b.records[i])) p.input_elements += b.per_record[i].output.numel();
  p.parameter_count = b.parameter_count;
  return p;
}

}  // namespace gpubudget
