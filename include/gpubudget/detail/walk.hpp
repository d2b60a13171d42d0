// gpubudget/detail/walk.hpp — interprets a model's record array: forward, then backward.
#pragma once
#include <array>
#include <cstdint>
#include <gpubudget/base/dyn_array.hpp>
#include <gpubudget/detail/module_names.hpp>

#include <gpubudget/detail/ops.hpp>
#include <gpubudget/detail/sim.hpp>
#include <gpubudget/detail/variational.hpp>
#include <gpubudget/layer.hpp>

namespace gpubudget::detail {

/// What one record contributed (for a composite: its whole subtree, every application).
struct record_stats {
  std::int64_t parameter_count = 0;  ///< parameter elements (shared weights: first use only)
  std::int64_t trainable_count = 0;       ///< of which require grad
  std::int64_t buffer_bytes = 0;
  std::int64_t saved_bytes = 0;     ///< saved for backward during its forward(s)
  std::int64_t output_bytes = 0;    ///< its output tensor (last application)
  std::int64_t applications = 0;    ///< times it ran in forward
  shape output{};
};

struct walk_totals {
  std::int64_t parameter_count = 0, trainable_count = 0, buffer_bytes = 0;
  std::int64_t base_weight_count = 0, base_weight_bytes = 0;  ///< of parameter_count: frozen base weights in their own type
  /// of parameter_count: tensors kept in a type of their own (layer_ctx::own_stored_type), and of
  /// those the trainable ones
  std::int64_t own_type_count = 0, own_type_bytes = 0, own_type_trainable = 0, own_type_trainable_bytes = 0;
  std::int64_t largest_trainable = 0;  ///< elements of the largest trainable parameter tensor
  std::int64_t trainable_adam8bit_state = 0;  ///< 8-bit Adam state of the trainable tensors (training.hpp)
  std::int64_t input_bytes = 0;        ///< the data batch(es)
  std::int64_t largest_im2col = 0;     ///< bytes of the largest conv's unfolded input (cuDNN GEMM workspace)
};

/// What a record is walked under: freezing, shared weights, train_only's selection.
struct walk_scope {
  bool trainable = true;
  bool count_params = true;
  std::int32_t key_shift = 0;  ///< maps a shared block's records to its first occurrence
  std::uint8_t frozen_parts = 0;  ///< of a trainable leaf, the parts no name selected (layer_ctx)
};

/// An auxiliary head's output, which the trainer holds and takes a loss of (graph.hpp
/// auxiliary_output); or, `branch` >= 0, an auxiliary_output_last head still to run on `held`,
/// its input, under `sc`.
struct auxiliary_head {
  value held{};
  std::int32_t branch = -1;
  walk_scope sc{};
  /// a gaussian_latent's log-variance (held is its mean): the loss adds their KL term, not a
  /// head's loss (detail/variational.hpp)
  value logvar{};
};
inline constexpr std::size_t max_auxiliary_heads = 8;

/// The walker's scalar state, apart from its arrays and what its constructor derives (a split
/// walk, budget_of.hpp, carries it from one constant evaluation to the next in one copy).
struct walker_scalars {
  walk_totals totals{};
  bool replaying = false;
  bool counting = true;  ///< false on the second micro-batch: parameters were counted already
  bool collect_stats = true;  ///< per-record statistics (budget(); budget_totals() skips them: the constructor's `collect`)
  std::int32_t first_node_of_pass = 0;
  std::int32_t next_key = 0;
  /// The storage whose reference the sequence walking a `continues_sequence` repeat hands over
  /// to it, and whether the repeat took it: in PyTorch those blocks are flat in one loop, so
  /// while block k runs only block k-1's output is held (frozen backbones:
  /// resnet50_fc_only_b2_224's forward peak, op_rules.md 2.6 / reference README).
  std::int32_t hand_over = -1;
  bool handed_over = false;
  std::uint8_t backward_pass = 0;  ///< 1 for the first micro-batch's backward, 2 for the next
  /// this micro-batch's auxiliary heads, in the order they ran or were deferred (walk_auxiliary)
  std::array<auxiliary_head, max_auxiliary_heads> auxiliary{};
  std::int32_t auxiliary_count = 0;
};

struct walker : walker_scalars {
  const layer* records;
  std::int32_t count;
  sim& s;
  dyn_array<record_stats> stats;
  dyn_array<std::int32_t> share_ids{}, share_roots{};


  /// A further micro-batch (gradient accumulation): the same weights, so the same keys.
  constexpr void next_micro_batch() {
    first_node_of_pass = static_cast<std::int32_t>(s.autograd_nodes.size_);
    counting = false;
    s.parameters_logged = true;
    next_key = 0;
    for (auto& k : first_key) k = -1;
    share_ids.clear();
    share_roots.clear();
  }

  /// `collect`: keep per-record statistics (budget()); without them (budget_totals(), a split walk,
  /// the batch search) no statistics array is made: filling it cost 4 steps a record, every walk.
  constexpr walker(const layer* n, std::int32_t c, sim& sm, bool collect = true)
      : records(n), count(c), s(sm), stats(collect ? static_cast<std::size_t>(c) : 0), first_key(static_cast<std::size_t>(c), -1) {
    collect_stats = collect;
    resolve_policy();
  }

  /// training::train_only resolved once before the walk (detail/module_names.hpp): per record,
  /// bit 0 = a name selects it, bit 1 = a name selects it in some copies of the repeats above
  /// it only (the conditions in train_only_matches), bit 2 = a repeat whose copies a name tells
  /// apart (walked copy by copy). Empty: no train_only.
  dyn_array<std::uint8_t> named_to_train{};
  module_selection train_only_matches{};
  /// The copy each told-apart repeat is running (-1: none), and those repeats (for checkpoints,
  /// which re-run a copy in backward: segment_copies holds their copies at each segment).
  dyn_array<std::int64_t> running_copy{};
  dyn_array<std::int32_t> split_repeats{};
  dyn_array<std::int64_t> segment_copies{};
  static constexpr std::uint8_t named_always = 1, named_in_some_copies = 2, copies_told_apart = 4;

  constexpr void resolve_policy() {
    if (!s.plan.train_only) return;
    named_to_train.resize(static_cast<std::size_t>(count), 0);
    for_each_list_item(s.plan.train_only, [&](const char* begin, const char* end) {
      const auto selects = select_modules(records, count, begin, end, train_only_matches);
      if (selects == name_selects::unknown_part) train_only_names_an_unknown_part();
      if (selects == name_selects::nothing) train_only_prefix_matches_no_record_name();
    });
    // a match of some parts of a leaf is tested like one in some copies (parts_named_now)
    for (const auto& m : train_only_matches.matches)
      named_to_train[static_cast<std::size_t>(m.record)] |= m.conditions_count == 0 && m.parts == all_parts ? named_always : named_in_some_copies;
    for (const auto& c : train_only_matches.conditions) {
      auto& flags = named_to_train[static_cast<std::size_t>(c.repeat)];
      if (!(flags & copies_told_apart)) split_repeats.push_back(c.repeat);
      flags |= copies_told_apart;
    }
    if (!split_repeats.empty()) running_copy.resize(static_cast<std::size_t>(count), -1);
  }
  constexpr std::uint8_t name_flags(std::int32_t i) const {
    return named_to_train.empty() ? 0 : named_to_train[static_cast<std::size_t>(i)];
  }
  /// Does train_only select record `i` in the copies now running? (One expression: it is asked
  /// of every record.)
  constexpr bool trains_by_name(std::int32_t i) const {
    return !named_to_train.empty() && ((named_to_train[static_cast<std::size_t>(i)] & named_always) ||
                                       ((named_to_train[static_cast<std::size_t>(i)] & named_in_some_copies) && parts_named_now(i)));
  }
  /// The parts of record `i` (all_parts: the record itself) that the matches holding for the
  /// copies now running select; 0: none holds.
  constexpr std::uint8_t parts_named_now(std::int32_t i) const {
    std::uint8_t parts = 0;
    for (const auto& m : train_only_matches.matches) {
      bool holds = m.record == i;
      for (std::int32_t k = 0; holds && k < m.conditions_count; ++k) {
        const auto& c = train_only_matches.conditions[static_cast<std::size_t>(m.conditions_begin + k)];
        holds = running_copy[static_cast<std::size_t>(c.repeat)] == c.repetition;
      }
      if (holds) parts = static_cast<std::uint8_t>(parts | m.parts);
    }
    return parts;
  }
  /// Sets the running copies of the told-apart repeats: those at checkpoint segment `seg`, or
  /// none (seg < 0).
  constexpr void restore_copies(std::int32_t seg) {
    for (std::size_t k = 0; k < split_repeats.size(); ++k)
      running_copy[static_cast<std::size_t>(split_repeats[k])] = seg < 0 ? -1 : segment_copies[static_cast<std::size_t>(seg) * split_repeats.size() + k];
  }

  using scope = walk_scope;

  /// Compact identity of a leaf's weights: fresh for every application that owns weights
  /// (each repetition of a repeated block has its own), the first occurrence's for shared ones.
  dyn_array<std::int32_t> first_key{};
  constexpr std::int32_t key_of(std::int32_t i, const scope& sc) {
    auto& k = first_key.data_[(i + sc.key_shift)];
    if (sc.count_params || k < 0) k = next_key;  // next_key advances by the parts the layer used
    return k;
  }

  // --- forward -------------------------------------------------------------------------------
  /// Record `i` on `in`: its scope (freezing, shared weights, train_only), a checkpoint when it
  /// or the policy asks for one, its per-record statistics when they are collected.
  constexpr value walk(std::int32_t i, const value& in, scope sc, bool force_checkpoint = false) {
    const layer& L = records[i];
    if (L.flags.frozen || L.share_id > 0 || trains_by_name(i)) sc = enter(i, sc);
    const bool checkpoint = (L.flags.checkpoint || force_checkpoint) && can_checkpoint();
    // leaves keep their own statistics (walk_leaf)
    if (!collecting() || L.kind == node_kind::leaf) return checkpoint ? run_segment(i, in, sc, false) : walk_inner(i, in, sc);
    const stats_mark before = mark();
    const value out = checkpoint ? run_segment(i, in, sc, false) : walk_inner(i, in, sc);
    add_stats_since(i, before, out);
    return out;
  }

  /// The totals a composite's statistics are taken against (budget()'s per-record table): what
  /// it added between mark() and add_stats_since().
  struct stats_mark {
    std::int64_t saved = 0, parameters = 0, trainable = 0, buffers = 0;
  };
  constexpr stats_mark mark() const { return {s.saved_total, totals.parameter_count, totals.trainable_count, totals.buffer_bytes}; }
  constexpr void add_stats_since(std::int32_t i, const stats_mark& m, const value& out) {
    add_stats(i, totals.parameter_count - m.parameters, totals.trainable_count - m.trainable, totals.buffer_bytes - m.buffers,
              s.saved_total - m.saved, out);
  }

  /// The scope inside record `i`: train_only names switch training on, frozen blocks off; a
  /// shared block's later occurrences map to the first one's weights (counted once).
  constexpr scope enter(std::int32_t i, scope sc) {
    const layer& L = records[i];
    if (trains_by_name(i)) sc = trained_by_name(i, sc);
    if (L.flags.frozen) sc.trainable = false;
    if (L.share_id > 0) {
      std::int32_t root = -1;
      for (std::size_t k = 0; k < share_ids.size(); ++k) if (share_ids[k] == L.share_id) root = share_roots[k];
      if (root < 0) { share_ids.push_back(L.share_id); share_roots.push_back(i + sc.key_shift); }
      else { sc.key_shift = root - i; sc.count_params = false; }
    }
    return sc;
  }

  /// The scope of record `i`, which a name selects: trainable; when the names select some parts
  /// of its op only (attention's q_proj) and nothing above it trains, the others stay frozen.
  constexpr scope trained_by_name(std::int32_t i, scope sc) const {
    const std::uint8_t parts = sc.trainable || (name_flags(i) & named_always) ? all_parts : parts_named_now(i);
    sc.trainable = true;
    sc.frozen_parts = static_cast<std::uint8_t>(~parts);
    return sc;
  }

  /// Adds one application of record `i` to its statistics (one assignment: cheap to evaluate).
  constexpr void add_stats(std::int32_t i, std::int64_t parameters, std::int64_t trainable, std::int64_t buffers, std::int64_t saved,
                           const value& out) {
    auto& st = stats.data_[(i)];
    st = record_stats{st.parameter_count + parameters, st.trainable_count + trainable, st.buffer_bytes + buffers,
                      st.saved_bytes + saved, s.bytes_of_value(out), st.applications + 1, out.s};
  }

  /// Are per-record statistics being collected (budget(), first application, first micro-batch)?
  constexpr bool collecting() const { return collect_stats && !replaying && counting; }

  /// A leaf without flags, shared weights or a name the policy looks at.
  constexpr bool is_plain_leaf(std::int32_t i) const {
    const layer& L = records[i];
    return L.kind == node_kind::leaf && !L.flags.checkpoint && !L.flags.frozen && L.share_id == 0 && !trains_by_name(i);
  }

  /// A checkpoint starts only in a training forward that is not already inside one.
  constexpr bool can_checkpoint() const { return s.dropping_saves_for < 0 && s.replay_cursor < 0 && !s.no_grad; }

  /// Runs record `i` (or, for one repetition of a repeat, its children) as a non-reentrant
  /// checkpoint: only the input is kept; its saves are dropped now and re-made in backward.
  constexpr value run_segment(std::int32_t i, const value& in, const scope& sc, bool repetition) {
    segment_record seg{};
    seg.layer_index = i;
    seg.input = in;
    seg.first_node = static_cast<std::int32_t>(s.autograd_nodes.size_);
    seg.trainable = sc.trainable;
    seg.key_shift = sc.key_shift;
    seg.frozen_parts = sc.frozen_parts;
    seg.repetition = repetition;
    seg.encoder_output = s.encoder_output, seg.sequence_memory = s.sequence_memory;
    s.retain(in.id);  // the checkpoint keeps its inputs for the re-run
    s.retain(seg.encoder_output.id);  // a decoder block's second input (encoder_hidden_states)
    s.retain(seg.sequence_memory.id);
    // 2.x saves them through an autograd node (NoopSaveInputs, torch/utils/checkpoint.py, any
    // device) that saved-tensor hooks see: counted as saved (op_rules.md 2.6 #18)
    if (s.torch2()) hold_saved(in.id, +1);
    s.segments.push_back(seg);
    for (const auto r : split_repeats) segment_copies.push_back(running_copy[static_cast<std::size_t>(r)]);
    s.dropping_saves_for = static_cast<std::int32_t>(s.segments.size() - 1);
    const value out = repetition ? run_children(i, in, sc) : walk_inner(i, in, sc);
    s.dropping_saves_for = -1;
    s.segments.back().end_node = static_cast<std::int32_t>(s.autograd_nodes.size_);
    // preserve_rng_state=True (the default) keeps torch.get_rng_state(), the CPU generator's
    // 5056-byte state tensor, until the block is recomputed (a CPU malloc count sees it; the
    // segment's first node goes last in backward)
    const auto& seg_done = s.segments.back();
    if (s.count_host && seg_done.end_node > seg_done.first_node) s.add_host(5056, s.node(seg_done.first_node).host_bytes);
    return out;
  }

  /// A checkpoint's hold on its input counted as a save (+1) or no longer (-1).
  constexpr void hold_saved(std::int32_t id, int delta) {
    if (id < 0) return;
    auto& st = s.storages.data_[(id)];
    if (delta > 0 && st.saved++ == 0) s.saved_total += st.bytes;
    if (delta < 0 && --st.saved == 0) s.saved_total -= st.bytes;
  }

  /// Runs the children of composite `i` in sequence on `in`; returns a new reference. `consume`:
  /// the first child takes the caller's reference to `in` (nothing else holds it while they run).
  constexpr value run_children(std::int32_t i, const value& in, const scope& sc, bool checkpoint_each = false, bool consume = false) {
    value cur = in;
    if (!consume) s.retain(cur.id);
    const std::int32_t end = i + records[i].span;
    const bool force = checkpoints_children(i, checkpoint_each);
    for (std::int32_t c = i + 1; c < end; c += records[c].span) cur = run_child(c, cur, sc, force);
    return cur;
  }

  /// Does composite `i` checkpoint each of its children? training::checkpoint_all checkpoints
  /// every top-level block.
  constexpr bool checkpoints_children(std::int32_t i, bool checkpoint_each) const { return (i == 0 && s.plan.checkpoint_all) || checkpoint_each; }

  /// Child `c` of a sequence on `cur`, whose reference it consumes; returns a new reference.
  constexpr value run_child(std::int32_t c, const value& cur, const scope& sc, bool force) {
    value next{};
    if (!force && is_plain_leaf(c)) {
      // most records are plain leaves: straight to the op, without walk()'s scope and checkpoint logic
      next = walk_leaf(c, cur, sc), s.release(cur);
    } else if (records[c].kind == node_kind::repeat && records[c].flags.continues_sequence && !force && !records[c].flags.checkpoint) {
      next = walk_continuing(c, cur, sc);
    } else {
      next = walk(c, cur, sc, force && !is_source(records[c])), s.release(cur);
    }
    return next;
  }

  /// Is record `i` a sequence that walk(i, ...) runs child by child with nothing around them (no
  /// scope of its own, no checkpoint, no statistics)? A split walk (budget_of.hpp) can then stop
  /// between its children: run_child from root_scope, consuming the reference before it (inside
  /// a nested one, run_children's own reference, the caller's released after its last child).
  constexpr bool runs_child_by_child(std::int32_t i) const {
    const layer& L = records[i];
    return L.kind == node_kind::sequence && !L.flags.checkpoint && !L.flags.parts_are_blocks && !L.flags.frozen && L.share_id == 0 &&
           !trains_by_name(i) && !collecting();
  }
  /// The scope walk(0, ...) starts from (run_micro_batches).
  constexpr scope root_scope() const { return scope{s.plan.train_only == nullptr, true, 0}; }

  /// A repeat whose copies continue the sequence walking it: the sequence's reference to its
  /// input is dropped once the first copy ran (node_flags::continues_sequence, walk_repeat).
  /// Consumes the caller's reference to `cur`.
  constexpr value walk_continuing(std::int32_t c, const value& cur, const scope& sc) {
    hand_over = cur.id, handed_over = false;
    const value next = walk(c, cur, sc, false);
    if (!handed_over) s.release(cur);
    hand_over = -1, handed_over = false;
    return next;
  }


  constexpr value walk_inner(std::int32_t i, const value& in, const scope& sc) {
    const layer& L = records[i];
    switch (L.kind) {
      case node_kind::sequence: return run_children(i, in, sc, L.flags.parts_are_blocks && s.plan.checkpoint_blocks);
      case node_kind::residual: {
        value y = run_children(i, in, sc);
        if (!(y.s == in.s)) shape_mismatch_between_layers();
        if (L.merge == merge_kind::add_inplace) return add_inplace(s, y, in);
        value out = add(s, in, y);
        s.release(y);
        return out;
      }
      case node_kind::repeat: return walk_repeat(i, in, sc);
      case node_kind::parallel: return walk_parallel(i, in, sc);
      case node_kind::encoder_decoder:
      case node_kind::modulated: return walk_encoder_decoder(i, in, sc);
      case node_kind::leaf: break;
    }
    return walk_leaf(i, in, sc);
  }

  /// The encoder on `in`, then the decoder from its own source (tokens) while the encoder's
  /// output is the memory its cross-attention reads (sim::encoder_output); the output is the
  /// decoder's. The memory lives as long as something keeps it (each cross-attention's k and v
  /// projections save it), as the Python reference does. A modulated block (graph.hpp modulated)
  /// is walked the same way, its body on `in`: the modulation reads the enclosing condition, the
  /// body's condition() the modulation's output.
  constexpr value walk_encoder_decoder(std::int32_t i, const value& in, const scope& sc) {
    const std::int32_t encoder = i + 1, decoder = encoder + records[encoder].span;
    const value memory = walk(encoder, in, sc);
    const value outer = s.encoder_output, outer_sequence = s.sequence_memory;
    s.encoder_output = memory;
    if (memory.s.rank == 2) s.sequence_memory = memory;
    const value out = walk(decoder, records[i].kind == node_kind::modulated ? in : value{}, sc);
    s.encoder_output = outer, s.sequence_memory = outer_sequence;
    s.release(memory);
    return out;
  }

  /// `count` copies of a block. Copies 2..count-1 are identical up to a shift of the baseline
  /// (each retains the same bytes and adds the same gradients), so their peaks lie between
  /// those of copy 2 and copy `count`: the walk simulates copies 1, 2 and `count` and stands in
  /// for the others with one "phantom" record holding their retained bytes and gradients.
  /// That keeps a repeat's cost that of three blocks at most, whatever its count. With the
  /// caching allocator's log on (sim::log_allocator), every copy is walked: the allocator sees
  /// each copy's requests, temporaries and frees in the order the process makes them (A11).
  constexpr value walk_repeat(std::int32_t i, const value& in, const scope& sc) {
    const layer& L = records[i];
    const std::int64_t count = L.count;
    if (count < 1) invalid_layer_argument();
    value cur = in;
    s.retain(cur.id);
    const bool take = hand_over >= 0 && hand_over == in.id;
    hand_over = -1;
    bool taken = false;
    // several modules a copy that continue the caller's nn.Sequential (modules_per_copy > 1), or
    // layers of the model's own loop: flat in PyTorch, so each copy's input lives no longer than
    // its first module (flat_copies); only the former also drop the caller's reference
    const bool flat = flat_copies(i) && (take || !L.flags.continues_sequence);
    if (flat && take) s.release(in), taken = true;
    const bool told_apart = name_flags(i) & copies_told_apart;  // a name picks some copies: walk each
    for (std::int64_t r = 0; r < count; ++r) {
      // the allocator model replays every copy's requests in the process's order (op_rules.md A11)
      const bool measure = r == 1 && count > 3 && !told_apart && !s.log_allocator && !holds_auxiliary_head(i);  // also while re-running a checkpointed block
      const scope copy_scope = told_apart ? enter_copy(i, r, sc) : sc;
      copy_snapshot before{};
      if (measure) take_snapshot(i, before);
      // checkpoint_blocks: one checkpoint per repetition (the whole block), not one per part,
      // unless the block is several blocks (node_flags::parts_are_blocks: walk_inner checkpoints each)
      const bool segment = s.plan.checkpoint_blocks && can_checkpoint() && !records[i + 1].flags.parts_are_blocks;
      const value next = segment ? run_segment(i, cur, copy_scope, true) : flat ? walk_consuming(i + 1, cur, copy_scope) : run_children(i, cur, copy_scope);
      if (count > 1 && !(next.s == in.s)) repeated_block_must_keep_its_shape();
      if (!flat || segment) s.release(cur);
      if (take && !taken) { s.release(in); taken = true; }  // the caller's reference (hand_over)
      cur = next;
      if (measure) {
        stand_in_for_copies(i, count - 3, before);
        r = count - 2;  // next: the last copy
      }
    }
    if (told_apart) running_copy[static_cast<std::size_t>(i)] = -1;
    handed_over = taken;
    return cur;
  }

  /// Does repeat `i`'s block hold an auxiliary head? Each copy's head takes a loss of its own,
  /// which a stand-in for copies would not: such a repeat walks every copy.
  constexpr bool holds_auxiliary_head(std::int32_t i) const {
    for (std::int32_t k = i + 1; k < i + records[i].span; ++k)
      if (records[k].kind == node_kind::parallel && holds_an_output(records[k].merge)) return true;
    return false;
  }

  /// Are repeat `i`'s copies runs of modules of the caller's own sequence: a continue_sequence
  /// repeat whose block is a plain sequence of several modules (numbered_from's modules_per_copy),
  /// nothing around it? A nested block holds its input until it returns (the caller's frame
  /// keeps it); modules of one nn.Sequential do not (TCN's Chomp1d stacks, VGG's conv-ReLU runs),
  /// nor do the layers of a period grouped for the walk (a body of node_flags::loop_steps:
  /// alternating_groups' Gemma 2, Gemma 3, OLMo 3 layers, which transformers runs in one
  /// `for decoder_layer in self.layers` loop, each layer's input held by that loop alone).
  constexpr bool flat_copies(std::int32_t i) const {
    const layer& L = records[i];
    const std::int32_t body = i + 1;
    if (body >= i + L.span || records[body].span + 1 != L.span) return false;
    if (!(L.flags.continues_sequence || records[body].flags.loop_steps) || modules_per_copy(L) < 2) return false;
    const layer& B = records[body];
    return B.kind == node_kind::sequence && !B.flags.checkpoint && !B.flags.frozen && B.share_id == 0 && !trains_by_name(body) &&
           !(s.plan.checkpoint_blocks && can_checkpoint());
  }
  /// Plain sequence `i` on `in`, whose reference its first child takes; statistics as walk()'s.
  constexpr value walk_consuming(std::int32_t i, const value& in, const scope& sc) {
    if (!collecting()) return run_children(i, in, sc, false, true);
    const stats_mark before = mark();
    const value out = run_children(i, in, sc, false, true);
    add_stats_since(i, before, out);
    return out;
  }

  /// The walk's counters before a measured copy of repeat `i` (walk_repeat), and its records' statistics.
  struct copy_snapshot {
    std::int64_t live = 0, fixed = 0, rounded = 0, saved = 0, views = 0, shared_saved = 0;
    walk_totals totals{};
    std::int32_t nodes = 0;
    std::size_t cache = 0, shared = 0, with_output = 0;
    dyn_array<record_stats> stats{};
  };
  constexpr void take_snapshot(std::int32_t i, copy_snapshot& b) const {
    b.live = s.live, b.fixed = s.live_fixed, b.rounded = s.live_rounded, b.saved = s.saved_total, b.views = s.host_view_bytes;
    b.shared_saved = s.shared_inputs_saved();
    b.totals = totals, b.nodes = static_cast<std::int32_t>(s.autograd_nodes.size_), b.cache = s.forward_cache.size();
    b.shared = s.shared_inputs.size(), b.with_output = s.output_cache.size();
    if (counting && !replaying && collect_stats)
      for (std::int32_t k = i + 1; k < i + records[i].span; ++k) b.stats.push_back(stats.data_[(k)]);
  }

  /// After copy 2 of repeat `i` ran (from `b`): `copies` more like it, as one phantom record
  /// holding their retained bytes and gradients, and their parameters and statistics counted.
  constexpr void stand_in_for_copies(std::int32_t i, std::int64_t copies, const copy_snapshot& b) {
    std::int64_t grads = 0;
    for (auto n = b.nodes; n < static_cast<std::int32_t>(s.autograd_nodes.size_); ++n) grads += s.autograd_nodes.data_[(n)].param_grad_bytes;
    if (counting && !replaying) count_copies(i, copies, b);
    // host bookkeeping of view nodes lives until the whole graph goes: keep it out of the
    // phantom's storage (which backward frees where the phantom stands)
    const auto views = checked_mul(copies, s.host_view_bytes - b.views);
    // a model-wide input first made in copy 2 (a mask in a type copy 1 did not use) is made once
    const auto made_once = shared_inputs_made_since(b.shared);
    const auto retained = checked_mul(copies, s.live - b.live - made_once.bytes) - views;
    const auto retained_rounded = checked_mul(copies, s.live_rounded - b.rounded - made_once.rounded) - views;
    const auto retained_fixed = checked_mul(copies, s.live_fixed - b.fixed - made_once.fixed) - views;
    if (views > 0) s.add_host(views, s.host_view_bytes);
    // what only autocast's cache holds (a checkpointed block's weight casts) goes when the
    // forward ends, not with the phantom in backward (op_rules.md CT5)
    const auto cached = cache_only(b.cache, b.shared);
    // a model-wide input (a mask, once per forward) first saved in copy 2 (copy 1's input needed no
    // gradient: a frozen embedding under LoRA) is saved once, not once more a copy
    const auto saved = s.saved_total - b.saved - (s.shared_inputs_saved() - b.shared_saved);
    // what only the model's output holds (transformers' past_key_values: an eval forward's k and v)
    // goes with the output, not with the phantom in backward
    const auto with_output = held_only_by_output(b.with_output);
    add_phantom(i, retained - checked_mul(copies, cached.bytes + with_output.bytes), retained_rounded - checked_mul(copies, cached.rounded + with_output.rounded),
                retained_fixed - checked_mul(copies, cached.fixed + with_output.fixed), checked_mul(copies, saved), checked_mul(copies, grads));
    if (cached.bytes > 0)
      s.cache_until_forward_ends(s.allocate(checked_mul(copies, cached.bytes), false, checked_mul(copies, cached.rounded), checked_mul(copies, cached.fixed)));
    if (with_output.bytes > 0)
      s.output_cache.push_back(s.allocate(checked_mul(copies, with_output.bytes), false, checked_mul(copies, with_output.rounded), checked_mul(copies, with_output.fixed)));
  }

  /// The parameters and per-record statistics of `copies` more copies of repeat `i`'s block,
  /// each adding what copy 2 added after `b`.
  constexpr void count_copies(std::int32_t i, std::int64_t copies, const copy_snapshot& b) {
    for (std::int32_t k = i + 1; collect_stats && k < i + records[i].span; ++k) {  // the block's records: every copy
      auto& st = stats.data_[(k)];
      const auto& b0 = b.stats.data_[(k - i - 1)];
      st.parameter_count = checked_add(st.parameter_count, checked_mul(copies, st.parameter_count - b0.parameter_count));
      st.trainable_count = checked_add(st.trainable_count, checked_mul(copies, st.trainable_count - b0.trainable_count));
      st.buffer_bytes = checked_add(st.buffer_bytes, checked_mul(copies, st.buffer_bytes - b0.buffer_bytes));
      st.saved_bytes = checked_add(st.saved_bytes, checked_mul(copies, st.saved_bytes - b0.saved_bytes));
      st.applications = checked_add(st.applications, checked_mul(copies, st.applications - b0.applications));
    }
    const auto& t0 = b.totals;
    // every count that copy 2 added, `copies` times more (largest_* and input_bytes: not per copy)
    for (auto field : {&walk_totals::parameter_count, &walk_totals::trainable_count, &walk_totals::trainable_adam8bit_state,
                       &walk_totals::buffer_bytes, &walk_totals::base_weight_count, &walk_totals::base_weight_bytes,
                       &walk_totals::own_type_count, &walk_totals::own_type_bytes, &walk_totals::own_type_trainable,
                       &walk_totals::own_type_trainable_bytes})
      totals.*field = checked_add(totals.*field, checked_mul(copies, totals.*field - t0.*field));
  }

  struct held_bytes {
    std::int64_t bytes = 0, rounded = 0, fixed = 0;
  };
  /// Bytes of the shared inputs (sim::shared_input) made from entry `first` on and still alive.
  constexpr held_bytes shared_inputs_made_since(std::size_t first) const {
    held_bytes h{};
    for (auto k = first + 4; k < s.shared_inputs.size(); k += 5) {
      const auto& st = s.storages.data_[(s.shared_inputs[k])];
      if (st.alive) h.bytes += st.bytes, h.rounded += st.rounded, h.fixed += st.fixed;
    }
    return h;
  }
  constexpr bool is_shared_input_since(std::size_t first, std::int32_t id) const {
    for (auto k = first + 4; k < s.shared_inputs.size(); k += 5)
      if (s.shared_inputs[k] == id) return true;
    return false;
  }
  /// Bytes of the tensors held with the model's output from entry `first` of sim::output_cache on
  /// that nothing else holds (no node saved them).
  constexpr held_bytes held_only_by_output(std::size_t first) const {
    held_bytes h{};
    for (auto k = first; k < s.output_cache.size(); ++k) {
      const auto& st = s.storages.data_[(s.output_cache[k])];
      if (st.alive && st.saved == 0 && st.refs == 1) h.bytes += st.bytes, h.rounded += st.rounded, h.fixed += st.fixed;
    }
    return h;
  }
  /// Bytes of the autocast cache's entries from `first` on that nothing else holds (no node saved
  /// them), the shared inputs made from entry `first_shared` on aside (made once, not per copy).
  constexpr held_bytes cache_only(std::size_t first, std::size_t first_shared) const {
    held_bytes h{};
    for (auto k = first; k < s.forward_cache.size(); ++k) {
      const auto& st = s.storages.data_[(s.forward_cache[k])];
      if (st.alive && st.saved == 0 && st.refs == 1 && !is_shared_input_since(first_shared, s.forward_cache[k]))
        h.bytes += st.bytes, h.rounded += st.rounded, h.fixed += st.fixed;
    }
    return h;
  }

  /// The scope of copy `r` of repeat `i`, whose copies a train_only name tells apart.
  constexpr scope enter_copy(std::int32_t i, std::int64_t r, scope sc) {
    running_copy[static_cast<std::size_t>(i)] = r;
    if (trains_by_name(i)) sc.trainable = true;
    return sc;
  }

  /// Stands in for the copies of repeat record `repeat`: `retained` bytes stay alive from here
  /// until backward passes this point (`saved` of them count as saved for backward), where
  /// `grads` bytes of parameter gradients appear.
  constexpr void add_phantom(std::int32_t repeat, std::int64_t retained, std::int64_t retained_rounded, std::int64_t retained_fixed, std::int64_t saved,
                             std::int64_t grads) {
    if (s.no_grad) return;
    value held{s.allocate(retained, false, retained_rounded, retained_fixed), {}, dtype::fp32, true};
    std::int32_t at = 0;
    if (s.replay_cursor >= 0) {
      at = s.replay_cursor++;  // re-running a checkpointed block: the phantom recorded in forward
      s.release_phantom(at);   // drop what it held then (saves were dropped: next to nothing)
    } else {
      node_record n{};
      n.out = -1;
      n.segment = s.dropping_saves_for;
      n.param_grad_bytes = grads;
      n.param_key = grads > 0 ? next_key++ : -1;
      n.layer = repeat;  // backward names the repeat while passing its stand-in
      s.autograd_nodes.push_back(n);
      at = static_cast<std::int32_t>(s.autograd_nodes.size_ - 1);
    }
    // count the retained bytes as saved, whatever the dropping state of a checkpoint
    node_record& nd = s.node(at);
    nd.saved_begin = static_cast<std::int32_t>(s.saved_ids.size_);
    nd.saved_count = 1;
    s.saved_ids.push_back(held.id);
    ++s.storages.data_[(held.id)].saved;
    s.saved_total += saved;
    nd.phantom_saved = saved;
    s.release(held);
  }

  /// The shape branches merge into: concat adds dimension 0 (the rest equal), add, stack and
  /// maximum take equal shapes, multiply broadcasts a dimension of 1 against any (x * gate with a
  /// [C, 1, 1] or [1, H, W] gate), subtract and divide broadcast the later branches' dimensions of
  /// 1 against the first's (x - x.mean(-1, keepdim=True)); ranks equal.
  static constexpr shape merged_shape(const dyn_array<value>& outs, merge_kind merge) {
    shape merged = outs[0].s;
    for (std::size_t k = 1; k < outs.size(); ++k) {
      const auto& o = outs[k].s;
      if (o.rank != merged.rank) parallel_branches_disagree_on_shape();
      for (int d = (merge == merge_kind::concat ? 1 : 0); d < o.rank; ++d) {
        const bool to_first = merge == merge_kind::subtract || merge == merge_kind::divide || merge == merge_kind::add || merge == merge_kind::add_inplace;
        const bool broadcast = (merge == merge_kind::multiply && (o[d] == 1 || merged[d] == 1)) || (to_first && o[d] == 1);
        if (o[d] != merged[d] && !broadcast) parallel_branches_disagree_on_shape();
        if (broadcast && o[d] > merged[d]) merged[d] = o[d];
      }
      if (merge == merge_kind::concat) merged[0] += o[0];
    }
    return merged;
  }

  /// The batched product of two branches' outputs (torch.bmm, or torch.matmul of 3-D tensors:
  /// no fold, no copy): BmmBackward0 keeps both operands as given (a permuted view keeps its
  /// base), autocast runs it on 16-bit copies (detail::bmm holds the rest: OpenBLAS's buffer,
  /// the cuBLAS workspace). Consumes the branches' outputs.
  constexpr value matmul_of_branches(dyn_array<value>& outs) {
    if (outs.size() != 2 || outs[0].s.rank != 2 || outs[1].s.rank != 2) matmul_of_branches_needs_two_matrices();
    if (outs[0].s[1] != outs[1].s[0]) parallel_branches_disagree_on_shape();
    const dtype t = s.types.matmul(outs[0].type);
    const value a = cast_to(s, outs[0], t), b = cast_to(s, outs[1], t);
    for (auto& o : outs) s.release(o);
    value y = bmm(s, a, b, make_shape(a.s[0], b.s[1]), t, {a.s[0], b.s[1], a.s[1], outs[0].transposed, outs[1].transposed});
    s.release(a), s.release(b);
    return y;
  }

  /// a / b of two branches, b of a's shape or broadcast against it (a LayerNorm written out:
  /// (x - mean) / (std + eps)): detail::broadcast_divide; the quotient takes the wider type.
  constexpr value divide_of_branches(dyn_array<value>& outs) {
    if (outs.size() != 2) binary_merge_needs_two_branches();
    const value y = broadcast_divide(s, outs[0], outs[1], promoted_type(outs[0].type, outs[1].type));
    for (auto& o : outs) s.release(o);
    return y;
  }

  /// torch.maximum(a, b) or torch.minimum(a, b) of equal shapes (maxout): the node keeps both operands; each
  /// gradient is where(a == b, grad / 2, grad).masked_fill_(a < b, 0) (derivatives.yaml), so the
  /// second is computed beside the first with grad / 2 and two bool masks of the output's size
  /// (2.6 CPU, benchmarks/accuracy/tensors_both_sides_probe.py: [2, 256, 512] fp32, backward's peak 3.5 x the output).
  constexpr value maximum_of_branches(dyn_array<value>& outs, const shape& merged) {
    if (outs.size() != 2) binary_merge_needs_two_branches();
    value y = s.make(merged, promoted_type(outs[0].type, outs[1].type), outs[0].requires_grad || outs[1].requires_grad);
    const auto n = s.record(y);
    for (const auto& o : outs) s.save(n, o), s.grad_to(n, o);
    s.backward_temp(n, checked_add(s.bytes_of_value(merged, y.type), checked_mul(2, s.bytes_of_value(merged, dtype::boolean))));
    for (auto& o : outs) s.release(o);
    return y;
  }

  /// A branch of a cat or stack along dimension 1 gets its gradient as a slice of the joined one,
  /// strided when the batch is over 1: a convolution that made the branch's output copies it in
  /// its backward (2.6 CPU probe: [2, 32, 64, 64] 1x1, 3x3 and 5x5 convolutions, backward's rise
  /// 3.05 / 3.11 / 3.23 Y with a contiguous gradient, 4.05 / 4.11 / 4.23 Y with a cat's or a
  /// stack's slice). Only the node just recorded can be the branch's own.
  constexpr void copy_of_sliced_grad(const value& out) {
    if (const auto n = s.record_of(out); n >= 0 && s.node(n).out == out.id && s.node(n).copies_sliced_grad) s.backward_temp(n, s.bytes_of_value(out));
  }

  /// F.grid_sample(x, grid) of two branches, x [C, H, W] and grid [h, w, 2] (a spatial transformer):
  /// [C, h, w]; GridSampler2DBackward0 keeps x and the grid, its backward makes x's gradient
  /// (zeros, then scattered into) and the grid's, nothing else (2.6 CPU probe, [2, 16, 64, 64]:
  /// backward's rise = the two gradients + affine_grid's base grid). CUDA autocast runs it in fp32
  /// (its fp32 list: grid_sampler), the 16-bit operands copied.
  constexpr value grid_sample_of_branches(dyn_array<value>& outs) {
    if (outs.size() != 2) binary_merge_needs_two_branches();
    const value &x = outs[0], &grid = outs[1];
    if (x.s.rank != 3 || grid.s.rank != 3 || grid.s[2] != 2) grid_sample_needs_an_image_and_a_grid();
    const dtype t = s.types.fp32_op(x.type);
    const value x32 = cast_to(s, x, t), grid32 = cast_to(s, grid, s.types.fp32_op(grid.type));
    for (auto& o : outs) s.release(o);
    value y = s.make(make_shape(x.s[0], grid.s[0], grid.s[1]), t, x32.requires_grad || grid32.requires_grad);
    const auto n = s.record(y);
    s.save(n, x32), s.save(n, grid32);
    s.grad_to(n, x32), s.grad_to(n, grid32);
    s.release(x32), s.release(grid32);
    return y;
  }

  /// Auxiliary heads (graph.hpp auxiliary_output): the first branch's output passes on; each
  /// further branch is a head whose output the trainer holds for its loss (finish_forward), run
  /// here or, auxiliary_output_last, after the model's output on its input held until then
  /// (run_deferred_heads). Recomputing a checkpointed block replays a head that ran in it and
  /// drops its output (the first one is held); a deferred head ran outside the block.
  constexpr value walk_auxiliary(std::int32_t i, const value& in, const scope& sc) {
    const layer& L = records[i];
    const std::int32_t first = i + 1, end = i + L.span;
    if (first >= end || first + records[first].span >= end) auxiliary_output_needs_a_head();
    const value y = walk(first, in, sc);
    for (std::int32_t c = first + records[first].span; c < end; c += records[c].span) {
      if (L.merge == merge_kind::auxiliary_output_last) {
        if (!replaying) s.retain(in.id), hold_auxiliary(auxiliary_head{in, c, sc});
      } else {
        const value head = walk(c, in, sc);
        if (replaying) s.release(head);
        else hold_auxiliary(auxiliary_head{head, -1, sc});
      }
    }
    return y;
  }
  constexpr void hold_auxiliary(const auxiliary_head& h) {
    if (auxiliary_count >= static_cast<std::int32_t>(max_auxiliary_heads)) too_many_auxiliary_outputs();
    auxiliary[static_cast<std::size_t>(auxiliary_count++)] = h;
  }
  /// After the model's output: the auxiliary_output_last heads run, in order, each on its held
  /// input, which goes once the head ran.
  constexpr void run_deferred_heads() {
    for (std::int32_t k = 0; k < auxiliary_count; ++k) {
      auto& h = auxiliary[static_cast<std::size_t>(k)];
      if (h.branch < 0) continue;
      const value head = walk(h.branch, h.held, h.sc);
      s.release(h.held);
      h = auxiliary_head{head, -1, h.sc};
    }
  }
  /// The trainer lets go of the auxiliary outputs (with the model's output).
  constexpr void release_auxiliary() {
    for (std::int32_t k = 0; k < auxiliary_count; ++k) {
      const auto& h = auxiliary[static_cast<std::size_t>(k)];
      s.release(h.held), s.release(h.logvar);
    }
    auxiliary_count = 0;
  }
  /// A VAE's latent (graph.hpp gaussian_latent): z from the mean and log-variance branches, which
  /// the trainer holds for the loss's KL term (replaying a checkpointed block drops them).
  constexpr value gaussian_latent_of_branches(dyn_array<value>& outs) {
    if (outs.size() != 2) binary_merge_needs_two_branches();
    const value &mu = outs[0], &logvar = outs[1];
    if (!(mu.s == logvar.s)) gaussian_latent_branches_differ();
    const value z = gaussian_latent(s, mu, logvar);
    if (replaying) s.release(mu), s.release(logvar);
    else hold_auxiliary(auxiliary_head{mu, -1, {}, logvar});
    return z;
  }

  constexpr value walk_parallel(std::int32_t i, const value& in, const scope& sc) {
    const layer& L = records[i];
    if (is_auxiliary(L.merge)) return walk_auxiliary(i, in, sc);
    dyn_array<value> outs;
    const std::int32_t end = i + L.span;
    const bool sliced_grads = (L.merge == merge_kind::concat || L.merge == merge_kind::stack) && s.batch > 1;
    for (std::int32_t c = i + 1; c < end; c += records[c].span) {
      outs.push_back(walk(c, in, sc));
      if (sliced_grads) copy_of_sliced_grad(outs.back());
    }
    if (outs.empty()) { s.retain(in.id); return in; }
    if (L.merge == merge_kind::matmul) return matmul_of_branches(outs);
    if (L.merge == merge_kind::grid_sample) return grid_sample_of_branches(outs);
    if (L.merge == merge_kind::gaussian_latent) return gaussian_latent_of_branches(outs);
    shape merged = merged_shape(outs, L.merge);
    if (L.merge == merge_kind::divide) return divide_of_branches(outs);
    if (L.merge == merge_kind::maximum || L.merge == merge_kind::minimum) return maximum_of_branches(outs, merged);
    bool rg = false;
    for (const auto& o : outs) rg = rg || o.requires_grad;
    if (L.merge == merge_kind::add_inplace) {
      value acc = outs[0];
      for (std::size_t k = 1; k < outs.size(); ++k) {
        acc = add_inplace(s, acc, outs[k]);
        s.release(outs[k]);
      }
      return acc;
    }
    if (L.merge == merge_kind::stack) {
      if (merged.rank >= 5) tensor_rank_unsupported();
      for (int d = merged.rank; d > 0; --d) merged[d] = merged[d - 1];
      ++merged.rank;
      merged[0] = static_cast<std::int64_t>(outs.size());
    }
    value y = s.make(merged, outs[0].type, rg);
    auto n = s.record(y);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      if (L.merge == merge_kind::multiply) {
        for (std::size_t j = 0; j < outs.size(); ++j) if (j != k) s.save(n, outs[j]);
        s.grad_to(n, outs[k]);
        // a broadcast factor's gradient is computed at the product's size, then summed to its own
        // (MulBackward0: grad * other, sum_to; a hand-written squeeze-excitation's [C, 1, 1] gate)
        if (outs[k].s.numel() != merged.numel() && outs[k].requires_grad) s.backward_temp(n, s.bytes_of_value(merged, y.type));
      } else {
        // cat/stack backward hands out slices (views) of the incoming gradient; add passes it on,
        // to a broadcast operand summed to its size (AddBackward0's sum_to, a new tensor: 2.6 CPU
        // probe, [2, 64, 64, 64] + [2, 64, 1, 1]: backward's peak 4,312 B above the incoming
        // gradient, the conditioning of a diffusion U-Net's `h + time_emb[..., None, None]`);
        // subtract too but to b, which gets -grad (a new tensor): at the difference's size, then
        // summed to a broadcast b's (SubBackward0's sum_to; 2.6 CPU probe: [2, 256, 512] - [2, 256, 1]
        // peaks one [2, 256, 512] above the incoming gradient)
        const bool summed = L.merge == merge_kind::subtract || (L.merge == merge_kind::add && outs[k].s.numel() != merged.numel());
        s.grad_to(n, outs[k], k == 0 || !summed);
        if (L.merge == merge_kind::subtract && k > 0 && outs[k].requires_grad && outs[k].s.numel() != merged.numel())
          s.backward_temp(n, s.bytes_of_value(merged, y.type));
      }
    }
    for (auto& o : outs) s.release(o);
    return y;
  }

  static constexpr bool is_source(const layer& L) { return L.kind == node_kind::leaf && L.op && L.op->source; }

  /// One op: its lowering (through its descriptor) runs on the simulator; the walk adds up
  /// what it reports (parameters, buffers, the data batch, the convolution workspace).
  constexpr value walk_leaf(std::int32_t i, const value& in, const scope& sc) {
    const layer& L = records[i];
    if (!L.op || (in.id < 0 && !L.op->source)) L.op ? layer_needs_an_input_shape() : invalid_layer_argument();
    const bool source = in.id < 0;
    s.current_layer = i;
    const auto saved_before = s.saved_total;
    layer_ctx c{s, L, replaying || source ? -1 : key_of(i, sc), sc.trainable && !s.plan.freeze_all, sc.count_params && !replaying, sc.frozen_parts};
    const value out = L.op->lower(c, in);
    if (!replaying && c.param_key == next_key) next_key += c.parts;
    // one test for the common op that owns nothing (most of them)
    if (!replaying && (c.parameter_count | c.buffer_bytes | c.input_bytes | c.conv_workspace) != 0) add_totals(c);
    if (collecting()) add_stats(i, c.parameter_count, c.trainable ? c.parameter_count - c.frozen_parameter_count : 0, c.buffer_bytes, s.saved_total - saved_before, out);
    return out;
  }

  constexpr void add_totals(const layer_ctx& c) {
    if (c.conv_workspace > totals.largest_im2col) totals.largest_im2col = c.conv_workspace;
    if (!counting) return;  // a later micro-batch: the same weights, counted already
    totals.parameter_count = checked_add(totals.parameter_count, c.parameter_count);
    if (c.trainable) {
      // (one statement each: add_totals runs for every op that owns weights)
      totals.trainable_count = checked_add(totals.trainable_count, c.parameter_count - c.frozen_parameter_count),
      totals.own_type_trainable += c.own_type_count, totals.own_type_trainable_bytes += c.own_type_bytes;
      totals.trainable_adam8bit_state += c.adam8bit_state;
      if (c.largest_param > totals.largest_trainable) totals.largest_trainable = c.largest_param;
    }
    totals.buffer_bytes += c.buffer_bytes, totals.own_type_count += c.own_type_count, totals.own_type_bytes += c.own_type_bytes;
    totals.base_weight_count += c.base_weight_count, totals.base_weight_bytes += c.base_weight_bytes;
    totals.input_bytes += c.input_bytes;
  }

  // --- backward ------------------------------------------------------------------------------
  /// parameter key -> the backward pass (1, 2) whose gradient it holds (0: none), | owned_grad
  dyn_array<std::uint8_t> key_has_grad{};
  /// key_has_grad bit: the first gradient is a buffer the engine owns alone (an autocast cast's
  /// fp32 gradient), so a shared weight's second gradient is added into it in place
  static constexpr std::uint8_t owned_grad = 4;

  /// The storage holding storage `id`'s gradient so far (storage::grad).
  constexpr std::int32_t& grad_slot(std::int32_t id) { return s.storages.data_[id].grad; }

  /// Of `bytes` of gradient for storage `id`, the batch-independent part: a gradient grows with
  /// the batch as its tensor does (phantoms, the only mixed storages, get no gradients).
  constexpr std::int64_t fixed_part(std::int32_t id, std::int64_t bytes) const {
    return s.storages.data_[(id)].fixed > 0 ? bytes : 0;
  }

  /// The gradient waiting for storage `id` (-1: none), handed over to the caller; chunks'
  /// gradients are assembled first (SplitBackward0 runs right before the storage's own node).
  constexpr std::int32_t take_grad(std::int32_t id) {
    auto& slot = s.storages.data_[id].grad;
    const auto g = slot;
    slot = -1;
    return g != chunks_pending ? g : assemble_chunks(id);
  }

  /// storage::grad's mark for a storage whose chunks' gradients wait in chunk_grads (pairs: storage,
  /// gradient): PyTorch keeps each chunk's gradient (MulBackward0's 1 MB for a third of a 3 MB
  /// tensor) in SplitBackward0's input buffer until every chunk's has arrived, then cats them
  /// into the whole storage's gradient and frees them (bev_dwconv_b1_64's trace, events 154-181:
  /// four 1,048,576 B chunk gradients, then SplitBackward0's 3,145,728 B, then three frees;
  /// op_rules.md 2.11 #V1).
  static constexpr std::int32_t chunks_pending = -2;
  dyn_array<std::int32_t> chunk_grads{};
  /// The chunks' cat of storage `id` with whole gradient `g` added in (in place, as 2.x's engine).
  constexpr std::int32_t add_into_chunks(std::int32_t id, std::int32_t g) {
    const auto whole = assemble_chunks(id);
    s.release(g);
    return whole;
  }
  /// SplitBackward0 for storage `id`: the whole gradient, then the chunks' go.
  constexpr std::int32_t assemble_chunks(std::int32_t id) {
    const auto full = s.storages.data_[(id)].bytes;
    const auto whole = s.allocate(full, false, -1, fixed_part(id, full));
    for (std::size_t k = 0; k + 1 < chunk_grads.size(); k += 2)
      if (chunk_grads[k] == id) s.release(chunk_grads[k + 1]), chunk_grads[k] = -1;
    return whole;
  }

  /// Adds gradient `g` (of `bytes`) into the gradient buffer of storage `target`; `chunk`: the
  /// gradient of one chunk of it (held until SplitBackward0, chunks_pending).
  constexpr void accumulate(std::int32_t target, std::int32_t g, std::int64_t bytes, bool expand, bool chunk) {
    auto& slot = grad_slot(target);
    const auto full = s.storages.data_[(target)].bytes;
    if (slot < 0) {
      // (one statement on the common path; a whole gradient meeting chunks' is added into their cat)
      if (bytes >= full || expand) { slot = slot == chunks_pending ? add_into_chunks(target, g) : g; return; }
      if (chunk) {  // held until SplitBackward0 (take_grad)
        chunk_grads.push_back(target), chunk_grads.push_back(g);
        slot = chunks_pending;
        return;
      }
      // a gradient for part of a storage (a slice or a split view): the engine materializes the
      // whole storage's gradient (SplitBackward / SelectBackward build a full-size tensor)
      grad_slot(target) = s.allocate(full, false, -1, fixed_part(target, full));
      s.release(g);
      return;
    }
    if (bytes < full && !expand) {  // another slice of a split storage: written in place
      s.release(g);
      return;
    }
    // A second gradient for the same tensor. PyTorch 2.x, any device: the engine's InputBuffer
    // adds it into the first buffer when nothing else holds that one (2·X peak, op_rules.md 2.6
    // #17; torch/csrc/autograd/input_buffer.cpp, can_accumulate_inplace).
    if (s.torch2() && s.storages.data_[(grad_slot(target))].refs == 1) {
      s.release(g);
      return;
    }
    // 1.13: it sums out of place (old + new + sum alive together, op_rules.md §3), then drops
    // both addends.
    const auto sum = s.allocate(full, false, -1, fixed_part(target, full));
    s.release(grad_slot(target));
    s.release(g);
    grad_slot(target) = sum;
  }

  constexpr void recompute(std::int32_t seg_index) {
    auto& seg = s.segments[static_cast<std::size_t>(seg_index)];
    seg.recomputed = true;
    replaying = true;
    s.replay_cursor = seg.first_node;
    scope sc{seg.trainable, false, seg.key_shift, seg.frozen_parts};
    const value outer = s.encoder_output, outer_sequence = s.sequence_memory;
    s.encoder_output = seg.encoder_output, s.sequence_memory = seg.sequence_memory;
    if (!split_repeats.empty()) restore_copies(seg_index);  // the copies the segment ran in
    value out = seg.repetition ? run_children(seg.layer_index, seg.input, sc) : walk_inner(seg.layer_index, seg.input, sc);
    if (!split_repeats.empty()) restore_copies(-1);
    s.encoder_output = outer, s.sequence_memory = outer_sequence;
    s.release(out);
    // torch/utils/checkpoint.py re-enters torch.autocast for the recomputation: leaving it clears
    // the cache, freeing the casts no recomputed node saved (op_rules.md CT5)
    s.end_forward();
    s.replay_cursor = -1;
    replaying = false;
  }


  /// A parameter gradient of `bytes` arriving for the weights `key`.
  /// `owned`: the gradient is a fresh buffer only the engine references (see owned_grad).
  /// `second`: of `bytes`, a second tensor's (a bias): its .grad is a block of its own, after
  /// the weight's (op_rules.md A14; one storage without the allocator's replay: the same bytes).
  constexpr void param_grad(std::int32_t key, std::int64_t bytes, bool owned = false, std::int64_t second = 0) {
    if (key < 0 || bytes == 0) return;
    if (static_cast<std::size_t>(key) >= key_has_grad.size()) key_has_grad.resize(static_cast<std::size_t>(key) + 1, 0);
    auto& seen = key_has_grad[static_cast<std::size_t>(key)];
    if (seen == 0) {
      s.grads_live += bytes;  // before allocate(): the peak it may set includes this .grad
      if (second > 0 && second < bytes && s.log_allocator) s.allocate(bytes - second, false, -1, bytes - second), bytes = second;
      s.allocate(bytes, false, -1, bytes);  // AccumulateGrad steals the buffer as .grad: alive until step()
      seen = static_cast<std::uint8_t>(backward_pass | (owned ? owned_grad : 0));
    } else if ((seen & 3) == backward_pass) {
      // shared weights: the earlier gradient waits in AccumulateGrad's input buffer; the engine
      // adds into it in place when it owns it alone (input_buffer.cpp can_accumulate_inplace;
      // op_rules.md L5), else out of place (held + incoming + sum, op_rules.md §3)
      s.transient_blocks(bytes, seen & owned_grad ? 1 : 2, true);
    } else {
      s.transient(bytes, true);  // an existing .grad (accumulation): the incoming is added in place
      seen = backward_pass;
    }
  }

  /// A node's 16-bit parameter gradients (storages; -1: none).
  struct cast_grads { std::int32_t weight = -1, second = -1; };

  /// Autocast: the casts' backward after node `rec` ran (its saved tensors and incoming gradient
  /// already freed): the fp32 .grad is made while the 16-bit gradient is still alive (op_rules.md
  /// 2.6 #35: every Linear/conv of the bf16 cases peaks either in the op's backward, without the
  /// fp32 .grad, or in ToCopyBackward0, without the op's saved tensors and scratch).
  /// `halves`: the 16-bit gradients the allocator's replay already holds (cast_grads_of), or none.
  constexpr void uncast_param_grads(const node_record& rec, cast_grads halves) {
    if (halves.weight < 0) halves = cast_grads_of(rec);
    param_grad(rec.param_key, rec.param_grad_bytes, !rec.cast_grad_through_view, rec.param_grad_second);
    s.release(halves.weight);
    s.release(halves.second);
  }
  /// The 16-bit gradients of a node's cast parameters: the weight's and the bias's are two
  /// blocks, as their .grads (A14).
  constexpr cast_grads cast_grads_of(const node_record& rec) {
    const auto second = s.log_allocator && rec.cast_grad_second < rec.cast_grad_bytes ? rec.cast_grad_second : 0;
    return {s.allocate(rec.cast_grad_bytes - second, false, -1, rec.cast_grad_bytes - second), second > 0 ? s.allocate(second, false, -1, second) : -1};
  }

  /// The op's own temporaries while its backward runs, then its optional library workspace.
  /// A node's temporaries (a GEMM's buffer, a convolution's workspace) while it runs. Its outputs
  /// are alive beside them: the engine adds them into the gradients already waiting
  /// (InputBuffer::add) only after the node returns, so `summed`, the outputs the walk has
  /// already added, count at these moments (tests/export/trace_peak.py on
  /// sdpa_transformer_lora_mlp_r4_b2_64: blocks.1.mlp.2's grad_input GEMM runs with the LoRA
  /// branch's input gradient waiting beside its own output and OpenBLAS's buffer; op_rules.md
  /// 2.6 #41). The allocator's replay keeps the order its rules were derived on (A-rules).
  /// With the allocator's replay the 16-bit parameter gradients are held storages (cast_grads_of,
  /// op_rules.md A18), not temporaries: PyTorch's AddmmBackward / ConvolutionBackward make them and
  /// ToCopyBackward frees them after making the fp32 .grad (VGG16 fp16 b128: 8,192,000 and 2,000 B
  /// for classifier.6, held across the node's release; one 8,194,000 B temporary made the replay's
  /// segments part from the trace's).
  constexpr void backward_temporaries(const node_record& rec, std::int64_t summed) {
    const bool held_apart = s.log_allocator && rec.cast_grad_blocks > 0;
    const auto temp = rec.backward_temp - (held_apart ? rec.cast_grad_bytes : 0);
    const auto blocks = rec.backward_temp_blocks - (held_apart ? rec.cast_grad_blocks : 0);
    if (temp) {
      s.note_peak(temp + summed, sim::round_block(temp) + sim::round_block(summed), rec.backward_temp_fixed - (held_apart ? rec.cast_grad_bytes : 0));
      if (s.log_allocator && !rec.backward_temp_first) s.log_temporary(temp / blocks, blocks);
    }
    s.optional_workspace(rec.backward_workspace, summed, workspace_kind::backward_data);
    s.optional_workspace(rec.backward_workspace_then, summed, workspace_kind::weight_gradient, rec.backward_workspace_then_fallback);
  }

  /// Backward from the scalar `loss` storage.
  constexpr void backward(std::int32_t loss) {
    // only this micro-batch's nodes: earlier ones already ran their backward
    for (auto n = begin_backward(loss); n >= first_node_of_pass; --n) backward_node(n);
    end_backward();
  }

  /// The engine starts from `loss`'s gradient; returns the first node to run (then each one
  /// before it, down to first_node_of_pass: backward_node).
  constexpr std::int32_t begin_backward(std::int32_t loss) {
    ++backward_pass;
    s.in_backward = true;
    if (s.backward_starts_at < 0) s.backward_starts_at = static_cast<std::int32_t>(s.storages.size_);
    grad_slot(loss) = s.allocate(4, false, -1, 4);  // torch.ones_like(loss)
    return static_cast<std::int32_t>(s.autograd_nodes.size_) - 1;
  }

  /// Node `n`'s backward: its incoming gradient passed on to its inputs' and its parameters'.
  constexpr void backward_node(std::int32_t n) {
    const auto seg = s.autograd_nodes.data_[(n)].segment;
    if (seg >= 0 && !s.segments[static_cast<std::size_t>(seg)].recomputed) recompute(seg);
    const node_record& rec = s.autograd_nodes.data_[(n)];
    s.current_layer = rec.layer;
    if (rec.out < 0) return backward_phantom(n, rec);  // stands in for repeated copies: between two real states
    const std::int32_t g = take_grad(rec.out);
    cast_grads halves{};
    if (g >= 0) {
      if (rec.backward_temp_first && s.log_allocator)  // asked before the output, freed after it
        s.log_temporary(rec.backward_temp / rec.backward_temp_blocks, rec.backward_temp_blocks, /*held=*/1);
      std::int64_t summed = 0;  // this node's outputs added into gradients already waiting
      for (std::int32_t e = 0; e < rec.inputs; ++e) {
        const grad_edge& edge = s.edges.data_[(rec.edges_begin + e)];
        if (edge.alias || edge.expand) s.retain(g);
        else if (grad_slot(edge.target) >= 0) summed += edge.bytes;
        accumulate(edge.target, edge.alias || edge.expand ? g : s.allocate(edge.bytes, false, -1, fixed_part(edge.target, edge.bytes)), edge.bytes,
                   edge.expand, edge.chunk);
      }
      if (rec.param_key >= 0 && rec.cast_grad_bytes == 0) param_grad(rec.param_key, rec.param_grad_bytes, false, rec.param_grad_second);
      if (rec.cast_grad_blocks > 0 && s.log_allocator) halves = cast_grads_of(rec);
      if (rec.backward_temp | rec.backward_workspace | rec.backward_workspace_then) backward_temporaries(rec, summed);  // one test: most nodes have none
    }
    if (rec.saved_count) s.release_saved(n);
    if (s.count_host) s.drop_host(s.autograd_nodes.data_[(n)].host_bytes);
    if (g >= 0) s.release(g);
    if (g >= 0 && rec.cast_grad_bytes) uncast_param_grads(rec, halves);
    if (seg >= 0 && s.segments[static_cast<std::size_t>(seg)].first_node == n) {
      if (s.torch2()) hold_saved(s.segments[static_cast<std::size_t>(seg)].input.id, -1);
      s.release(s.segments[static_cast<std::size_t>(seg)].input);
      s.release_segment_inputs(seg);
      s.release(s.segments[static_cast<std::size_t>(seg)].encoder_output);
      s.release(s.segments[static_cast<std::size_t>(seg)].sequence_memory);
    }
  }

  /// A phantom (walker::add_phantom) in backward: its copies' .grad appear here; on a later
  /// micro-batch they already exist and each copy's incoming gradient is a transient no larger
  /// than the real copies' around it.
  constexpr void backward_phantom(std::int32_t n, const node_record& rec) {
    s.release_phantom(n);
    const auto key = rec.param_key;
    if (key >= 0 && static_cast<std::size_t>(key) < key_has_grad.size() && key_has_grad[static_cast<std::size_t>(key)] != 0 &&
        (key_has_grad[static_cast<std::size_t>(key)] & 3) != backward_pass)
      key_has_grad[static_cast<std::size_t>(key)] = backward_pass;
    else
      param_grad(key, rec.param_grad_bytes);
  }

  /// After the last node: what no node took goes (begin_backward).
  constexpr void end_backward() {
    s.in_backward = false;
    s.current_layer = -1;
    s.drop_host(s.host_view_bytes);  // the graph is gone
    for (auto& st : s.storages)  // unused input grads, and chunks' of a storage no node produced
      if (st.grad != -1) { if (st.grad >= 0) s.release(st.grad); st.grad = -1; }
    for (std::size_t k = 0; k + 1 < chunk_grads.size(); k += 2)
      if (chunk_grads[k] >= 0) s.release(chunk_grads[k + 1]);
    chunk_grads.clear();
  }
};

}  // namespace gpubudget::detail
