// gpubudget/detail/sim.hpp — the liveness simulator behind every peak.
//
// It replays one training step the way PyTorch's eager mode and autograd engine run it: every
// op allocates its output; a tensor dies when its last Python reference and its last saved-for-
// backward reference are gone; backward visits recorded nodes in reverse creation order (the
// CPU engine's order for a chain), allocates gradients, then releases the node's saved tensors
// and its incoming gradient. Only byte counts are tracked. Dynamic arrays are allowed in
// constant evaluation since C++20 as long as nothing escapes it.
#pragma once
#include <cstdint>
#include <gpubudget/base/dyn_array.hpp>

#include <gpubudget/shape.hpp>
#include <gpubudget/training.hpp>
#include <gpubudget/units.hpp>

namespace gpubudget::detail {

/// A tensor as the layers see it: a storage plus the view's shape and type.
struct value {
  std::int32_t id = -1;     ///< storage index in sim::storages
  shape s{};                ///< per-sample shape
  dtype type = dtype::fp32;
  bool requires_grad = false;
  /// A transposed view, not contiguous (nn.MultiheadAttention's batch_first output and the adds
  /// that take its layout): a kernel that needs contiguous memory copies it (layer_norm).
  bool strided = false;
  /// One chunk of its storage (`t.chunk(3, dim=1)[i]`, sim::chunk_view): autograd's SplitBackward0
  /// assembles the storage's gradient once every chunk's has arrived (walker::accumulate).
  bool chunk = false;
  /// A view of another op's result that autograd tracks as a view (F.instance_norm returns batch
  /// norm's [1, B·C, ...] output viewed back to [B, C, ...]): an in-place op on it rebases the view
  /// with CopySlices, whose backward holds two more tensors of its size (inplace_on_view_backward).
  bool tracked_view = false;
  /// Its last two per-sample dimensions are a transpose of its memory's (`x.permute(0, 2, 1)`,
  /// `x.transpose(1, 2)`): a GEMM reads it as a transposed operand (cpu_gemm_buffer).
  bool transposed = false;
};

struct storage {
  std::int64_t bytes = 0;
  std::int32_t refs = 0;    ///< Python-side references (variables, views)
  std::int32_t saved = 0;   ///< references held by autograd nodes
  bool alive = false;
  bool external = false;    ///< allocated before the step (the input batch): never counted
  std::int64_t rounded = 0; ///< bytes as the caching allocator holds them (512 B blocks)
  std::int64_t fixed = 0;   ///< of `bytes`, the part that does not grow with the batch (weights' copies, .grad)
  /// When it was freed: storages allocated before it (the caching allocator's replay,
  /// allocator_replay.hpp, frees it right before storage `freed_at`); -1 while alive
  std::int32_t freed_at = -1;
  /// Backward: the storage holding its gradient so far (-1: none yet; walker::chunks_pending:
  /// its chunks' gradients wait). Kept here, not in a table of its own, so that no array has to
  /// be grown and filled as storages appear (constant evaluation charges each element).
  std::int32_t grad = -1;
};

/// Live bytes at one moment of the step, split into the part that grows with the micro-batch
/// and the part that does not: every moment is a line in the micro-batch, which is what lets
/// max_micro_batch solve for the batch instead of searching (check.hpp).
struct live_point {
  std::int64_t total = 0;  ///< live bytes (plus the moment's temporaries) at the simulated batch
  std::int64_t fixed = 0;  ///< of which batch-independent
  constexpr std::int64_t per_batch() const { return total - fixed; }
  /// Is `o` no larger than this at every batch size?
  constexpr bool covers(const live_point& o) const { return total >= o.total && per_batch() >= o.per_batch(); }
};

/// One gradient the node produces for one of its inputs.
struct grad_edge {
  std::int32_t target = -1;   ///< storage whose gradient this is
  std::int64_t bytes = 0;
  bool alias = false;         ///< passes the incoming gradient through (add, views): no allocation
  bool chunk = false;         ///< the gradient of one chunk of `target` (value::chunk)
  bool expand = false;        ///< a broadcast view of a smaller gradient (sum/mean backward):
                              ///< no allocation; the consumer materializes what it needs
};

/// An autograd node: what backward needs from it.
/// Which call of a convolution asks an optional cuDNN workspace: cuDNN's plan cache keys its
/// plans by the call (and the shapes), so the replay does too (allocator_replay.hpp, op_rules.md A20).
enum class workspace_kind : std::int8_t { forward = 1, backward_data = 2, weight_gradient = 3 };

struct node_record {
  std::int32_t out = -1;              ///< storage of the output whose gradient drives this node
  std::int32_t edges_begin = 0;       ///< its gradient edges: edges[edges_begin, +inputs)
  std::int32_t inputs = 0;
  std::int64_t param_grad_bytes = 0;  ///< .grad of trainable parameters
  /// Of those, a second parameter tensor's (a bias beside its weight): a .grad of its own, which
  /// the allocator's replay sees as its own block (op_rules.md A14)
  std::int64_t param_grad_second = 0;
  /// Autocast: of those, the 16-bit gradient the node computes for its cast parameters; the
  /// casts' backward (ToCopyBackward) turns it into param_grad_bytes after the node ran.
  std::int64_t cast_grad_bytes = 0;
  std::int64_t cast_grad_second = 0;  ///< of those, the second tensor's (param_grad_second's 16-bit gradient)
  std::int64_t backward_temp = 0;     ///< extra bytes alive only while this node runs
  std::int64_t backward_temp_fixed = 0;  ///< of which batch-independent
  std::int32_t backward_temp_blocks = 0; ///< how many temporaries make backward_temp (the allocator sees each)
  /// The allocator sees backward_temp's blocks before the node's output, which outlives them (a
  /// formula whose last op makes the result: PowBackward0, op_rules.md A6)
  bool backward_temp_first = false;
  /// Of backward_temp's blocks, the 16-bit parameter gradients (cast_grad_bytes): the allocator's
  /// replay holds them from the node's backward to the casts' (op_rules.md A18)
  std::int16_t cast_grad_blocks = 0;
  std::int64_t backward_workspace = 0;  ///< optional library workspaces while this node runs (sim::optional_workspace):
  std::int64_t backward_workspace_then = 0;  ///< the first freed before the second is asked for
  std::int64_t backward_workspace_then_fallback = 0;  ///< the second's when cuDNN's plan is its fallback (A20)
  std::int32_t saved_begin = 0;       ///< its saved storages: saved_ids[saved_begin, +saved_count)
  std::int32_t saved_count = 0;
  std::int32_t segment = -1;          ///< checkpoint segment this node belongs to
  std::int32_t param_key = -1;        ///< identity of the parameters (shared weights share a key)
  std::int64_t phantom_saved = 0;     ///< phantoms only: bytes of their storage counted as saved
  std::int64_t host_bytes = 0;        ///< host bookkeeping of this node (CPU reference only)
  std::int32_t layer = -1;            ///< the model record whose forward created it
  /// Autocast: the fp32 gradient of its cast parameters reaches them through a view (x @ W.t():
  /// TBackward after ToCopyBackward), which the engine cannot add a shared weight's other
  /// gradient into in place (op_rules.md L5)
  bool cast_grad_through_view = false;
  /// Its backward makes the incoming gradient contiguous (embedding_dense_backward's
  /// grad_.contiguous(), CPU and CUDA alike): a strided view of its output read downstream (a
  /// text CNN's embedding.transpose(1, 2)) costs a copy of the gradient there (op_rules.md 2.6 #57)
  bool contiguous_grad = false;
  /// Its backward copies an incoming gradient that is not contiguous (convolution_backward's
  /// grad_output.contiguous()): a branch of torch.cat / torch.stack along dimension 1 gets a slice
  /// of the joined gradient, strided when the batch is over 1 (op_rules.md 2.6 #64)
  bool copies_sliced_grad = false;
};

/// Host-side bookkeeping that a CPU malloc count sees next to tensor data: autograd nodes,
/// SavedVariables, TensorImpls (benchmarks/accuracy/op_rules.md §2, engine_probe.py host:
/// ~550 B per node, ~510 B per view node, ~1 KiB per node that saves a tensor).
struct host_costs {
  std::int64_t node = 550;
  std::int64_t view_node = 510;
  std::int64_t saved_tensor = 450;
};
/// PyTorch 2.6 CPU: +60..80 B per autograd node (op_rules.md 2.6 #16: ~633 B, ~996 B per
/// saving node, 1000-op chains); 1.13 otherwise.
constexpr host_costs host_costs_of(const training& t) {
  host_costs h{};
  if (t.torch26_cpu()) { h.node += 70; h.view_node += 70; }
  return h;
}

/// A checkpointed block: re-run in backward.
struct segment_record {
  std::int32_t layer_index = 0;       ///< root of the block in the model array
  value input{};
  std::int32_t first_node = 0, end_node = 0;
  bool trainable = true;
  bool recomputed = false;
  std::int32_t key_shift = 0;
  std::uint8_t frozen_parts = 0;      ///< of a checkpointed leaf a name selects some parts of: the others
  bool repetition = false;            ///< one repetition of a repeat (checkpoint_blocks): re-run its children
  value encoder_output{};             ///< inside an encoder_decoder's decoder: kept for the re-run (an input of the block)
  value sequence_memory{};            ///< the sequence its cross-attention reads, kept likewise
};

/// One moment of a step as a timeline sees it (timeline.hpp): the live bytes and what holds them.
struct moment {
  std::int64_t total = 0;      ///< live bytes plus the moment's temporaries
  std::int64_t gradients = 0;  ///< of which .grad of trainable parameters
  std::int64_t saved = 0;      ///< of which saved for backward
  std::int32_t layer = -1;     ///< record being run (forward or backward)
  bool in_backward = false;
};

/// Collects every moment of one simulated step (record_timeline_moment).
struct moment_recorder {
  dyn_array<moment> moments{};
  dyn_array<std::int32_t> external_ids{};  ///< storages allocated before the step (not live bytes)
  std::size_t scanned = 0;                 ///< storages looked at for external_ids so far
};

/// The simulator's scalar state, apart from its arrays: a split walk (budget_of.hpp) carries it
/// from one constant evaluation to the next in one copy.
struct sim;
struct sim_scalars {
  std::int64_t batch = 1;
  training plan{};
  precision_types types{};               ///< plan.precision resolved (types_of)
  runtime_kind rules = runtime_kind::torch2_cuda;  ///< plan.rules() resolved: whose op rules apply
  bool count_host = false;               ///< add host bookkeeping (CPU malloc reference)
  bool count_adam8bit = false;           ///< sum bitsandbytes' 8-bit state per tensor (8-bit optimizers only)
  host_costs host{};
  std::int64_t host_view_bytes = 0;      ///< view nodes' bookkeeping, freed with the graph
  std::int64_t live = 0;
  std::int64_t live_fixed = 0;           ///< of `live`, batch-independent (see live_point)
  std::int64_t grads_live = 0;
  /// Who sees every moment's live bytes: nobody (budget()), max_micro_batch's trace
  /// (trace_moment) or a timeline's recorder (record_timeline_moment). One pointer test per
  /// moment, as the flag it replaced: budget() pays nothing for the other two.
  using moment_hook = void (*)(sim&, const live_point&);
  moment_hook on_moment = nullptr;
  moment_recorder* recorder = nullptr;  ///< a timeline's moments (timeline.hpp), when recording one
  std::int64_t live_rounded = 0, peak_rounded = 0;  ///< with the caching allocator's 512 B rounding
  /// The caching allocator's replay (allocator_replay.hpp) needs, besides the storages in order
  /// and their freed_at: the op temporaries (quadruples: storages allocated before them, bytes
  /// of each block, blocks alive together, whether they outlive the next storage), the
  /// parameter tensors (elements; negative: frozen) and where backward starts.
  bool log_allocator = false;
  bool parameters_logged = false;  ///< a later micro-batch walks the same weights: logged once
  std::int32_t backward_starts_at = -1;
  /// The storage before which the forward's first cuBLAS call makes the main thread's workspace
  /// (op_rules.md A3: a CNN's classifier; a Llama's rotary tables right after the embedding).
  std::int32_t first_cublas_at = -1;
  // checkpointing state
  std::int32_t dropping_saves_for = -1;  ///< segment whose saves are dropped (forward under checkpoint)
  std::int32_t replay_cursor = -1;       ///< next node to re-attach saves to during recomputation
  bool no_grad = false;                  ///< inference / teacher forward
  std::int32_t last_recorded = -1;
  /// While an encoder_decoder's decoder runs: the encoder's output, which its cross-attention
  /// reads (id -1 elsewhere); inside a conditioned model, its condition (condition() reads it).
  value encoder_output{};
  /// The innermost such memory that is a sequence [L, D], which cross_attention reads: the same
  /// as encoder_output, except inside a conditioned model nested in one with a sequence (Stable
  /// Diffusion's UNet: the text encoder's states outside, the step's embedding inside).
  value sequence_memory{};
  /// Where the simulation is: the model record being run, and whether in backward.
  std::int32_t current_layer = -1;
  bool in_backward = false;
  /// The highest live bytes so far and where they occurred (one struct: set in one step).
  struct peak_point {
    std::int64_t bytes = 0;
    std::int64_t grads = 0;          ///< .grad bytes alive then
    std::int32_t layer = -1;         ///< record at whose forward (or backward) it occurred
    bool in_backward = false;
  };
  peak_point peak{};
  std::int64_t edge_bytes = 0;
  /// Bytes of every storage currently saved for backward, each storage once.
  std::int64_t saved_total = 0;
};

struct sim : sim_scalars {
  dyn_array<storage> storages{};
  dyn_array<node_record> autograd_nodes{};
  dyn_array<std::int32_t> saved_ids{};  ///< saved storages of every node, each node's contiguous
  dyn_array<grad_edge> edges{};         ///< gradient edges of every node, each node's contiguous
  dyn_array<segment_record> segments{};
  constexpr bool on_cpu() const { return backend_of(rules) == backend_kind::cpu; }
  constexpr bool torch2() const { return is_torch2(rules); }  ///< see training::torch2()
  constexpr bool torch26_cpu() const { return rules == runtime_kind::torch2_6_cpu; }  ///< CPU kernels only

  /// max_micro_batch's trace: consecutive moments that one of them covers are merged.
  dyn_array<live_point> trace{};
  static constexpr void trace_moment(sim& s, const live_point& p) { s.record_moment(p); }
  dyn_array<std::int64_t> temporaries{};
  dyn_array<std::int64_t> parameter_tensors{};
  dyn_array<std::int64_t> base_weight_tensors{};  ///< frozen base weights (LoRA, QLoRA): bytes each
  dyn_array<std::int64_t> own_type_tensors{};     ///< trainable tensors in a type of their own (modules_to_save): bytes each
  constexpr void note_cublas_call() {
    if (log_allocator && first_cublas_at < 0 && backward_starts_at < 0) first_cublas_at = static_cast<std::int32_t>(storages.size_);
  }
  /// No phantoms: with the log on, the walk runs every copy of a repeat (walker::walk_repeat).
  /// `blocks` < 0: one optional block, a cuDNN workspace of kind -blocks (workspace_kind: under
  /// a cap a failed request makes cuDNN try its next engine, not an OOM; allocator_replay.hpp);
  /// `held_or_fallback` is then the fallback engine's workspace. Else `held_or_fallback` != 0:
  /// asked before the next storage and freed after it (a backward formula's intermediates, its
  /// result the last op).
  constexpr void log_temporary(std::int64_t bytes, std::int64_t blocks = 1, std::int64_t held_or_fallback = 0) {
    temporaries.push_back(static_cast<std::int64_t>(storages.size_));
    temporaries.push_back(bytes);
    temporaries.push_back(blocks);
    temporaries.push_back(held_or_fallback);
  }


  /// Room for a step of a model of `records` records: a leaf makes about one autograd node, one
  /// edge, one saved tensor and two to three storages (distinct_1600: 4,645 storages, 1,602 nodes,
  /// 2,081 saves), so most walks never grow these arrays (growing copies every element, a step each).
  constexpr void reserve_for(std::size_t records) {
    storages.reserve(3 * records + 64);
    autograd_nodes.reserve(records + 64);
    edges.reserve(records + 64);
    saved_ids.reserve(2 * records + 64);
  }

  // --- bytes ---------------------------------------------------------------------------------
  constexpr std::int64_t bytes_of_value(const shape& s, dtype t) const { return s.scaled_numel(checked_mul(batch, bytes_per_element(t))); }
  constexpr std::int64_t bytes_of_value(const value& v) const { return bytes_of_value(v.s, v.type); }

  // PyTorch's CUDA caching allocator rounds every block to a multiple of 512 bytes
  // (kMinBlockSize = 512 in c10/cuda/CUDACachingAllocator.cpp).
  static constexpr std::int64_t round_block(std::int64_t b) { return b <= 0 ? 0 : (b + 511) / 512 * 512; }


  constexpr void note_peak(std::int64_t extra, std::int64_t extra_rounded, std::int64_t extra_fixed = 0) {
    if (on_moment) on_moment(*this, live_point{live + extra, live_fixed + extra_fixed});
    if (live + extra > peak.bytes) peak = peak_point{live + extra, grads_live, current_layer, in_backward};
    if (live_rounded + extra_rounded > peak_rounded) peak_rounded = live_rounded + extra_rounded;
  }
  constexpr void record_moment(const live_point& p) {
    if (!trace.empty()) {
      auto& last = trace.back();
      if (last.covers(p)) return;
      if (p.covers(last)) { last = p; return; }
    }
    trace.push_back(p);
  }
  /// A temporary that lives only inside the current op; `fixed`: its size does not grow with
  /// the batch.
  constexpr void transient(std::int64_t bytes, bool fixed = false) {
    if (bytes <= 0) return;
    note_peak(bytes, round_block(bytes), fixed ? bytes : 0);
    if (log_allocator) log_temporary(bytes);
  }
  /// A library workspace the op can do without: counted in the peaks (the library asks for it
  /// and gets it when there is room), optional in the allocator's replay.
  /// max_micro_batch's trace leaves it out: at the largest batch cuDNN takes a leaner engine.
  /// `alongside`: bytes alive with it that the live count no longer holds (a backward node's
  /// outputs already added into waiting gradients: walker::backward_temporaries).
  /// `kind` and `fallback`: cuDNN's plan cache in the replay (workspace_kind, op_rules.md A20).
  constexpr void optional_workspace(std::int64_t bytes, std::int64_t alongside = 0, workspace_kind kind = workspace_kind::forward,
                                    std::int64_t fallback = 0) {
    if (bytes <= 0) return;
    const auto hook = on_moment;
    if (hook == &trace_moment) on_moment = nullptr;
    note_peak(bytes + alongside, round_block(bytes) + round_block(alongside));
    on_moment = hook;
    if (log_allocator) log_temporary(bytes, -static_cast<std::int64_t>(kind), fallback);
  }
  /// `blocks` temporaries of `bytes` each, alive together (the allocator sees each on its own).
  constexpr void transient_blocks(std::int64_t bytes, std::int64_t blocks, bool fixed = false) {
    if (bytes <= 0) return;
    const auto all = checked_mul(bytes, blocks);
    note_peak(all, checked_mul(round_block(bytes), blocks), fixed ? all : 0);
    if (log_allocator) log_temporary(bytes, blocks);
  }

  // --- storages --------------------------------------------------------------------------------
  /// A new storage of `bytes`; `rounded` overrides its allocator-rounded size (a phantom stands
  /// for many blocks, each rounded on its own); `fixed` of its bytes do not grow with the batch.
  constexpr std::int32_t allocate(std::int64_t bytes, bool external = false, std::int64_t rounded = -1, std::int64_t fixed = 0) {
    const auto held = rounded >= 0 ? rounded : round_block(bytes);
    storages.push_back(storage{bytes, 1, 0, true, external, held, fixed});
    // note_peak, inlined and in few statements: allocate() runs for every tensor, and constant
    // evaluation charges every statement (live_rounded is no larger than live + 511 per block:
    // it cannot overflow before live does)
    if (!external)
      live = checked_add(live, bytes), live_fixed += fixed, live_rounded += held,
      peak = live > peak.bytes ? peak_point{live, grads_live, current_layer, in_backward} : peak,
      peak_rounded = live_rounded > peak_rounded ? live_rounded : peak_rounded;
    if (on_moment && !external) on_moment(*this, live_point{live, live_fixed});
    return static_cast<std::int32_t>(storages.size_ - 1);
  }
  constexpr void maybe_free(std::int32_t id) {
    auto& st = storages.data_[(id)];
    // one statement (constant evaluation charges every statement, and this runs for every tensor)
    if (st.alive && st.refs <= 0 && st.saved <= 0)
      st.alive = false, st.external ? void() : void((live -= st.bytes, live_rounded -= st.rounded, live_fixed -= st.fixed,
                                                      st.freed_at = static_cast<std::int32_t>(storages.size_)));
  }
  constexpr void retain(std::int32_t id) { if (id >= 0) ++storages.data_[(id)].refs; }
  constexpr void release(std::int32_t id) {
    if (id >= 0) --storages.data_[id].refs, maybe_free(id);
  }
  constexpr void release(const value& v) { release(v.id); }

  /// A new tensor (one Python reference).
  constexpr value make(const shape& s, dtype t, bool requires_grad) {
    return value{allocate(bytes_of_value(s, t)), s, t, requires_grad && !no_grad};
  }
  /// A new tensor the same for every sample (a mask, a position bias): `bytes` in all, none of
  /// which grows with the micro-batch (allocate's `fixed`, which max_micro_batch's line reads);
  /// `s` is its shape as its consumers read it.
  constexpr value make_batch_free(std::int64_t bytes, const shape& s, dtype t, bool requires_grad) {
    return value{allocate(bytes, false, -1, bytes), s, t, requires_grad && !no_grad};
  }
  /// A view of `v` (same storage, one more reference).
  constexpr value view(const value& v, const shape& s) {
    retain(v.id);
    if (count_host && v.requires_grad && replay_cursor < 0) add_host(host.view_node, host_view_bytes);
    return value{v.id, s, v.type, v.requires_grad};
  }
  /// One chunk of `v`'s storage (`t.chunk(n, dim)[i]`) in shape `s` (see value::chunk).
  constexpr value chunk_view(const value& v, const shape& s) {
    value c = view(v, s);
    c.chunk = true;
    return c;
  }
  /// Host bookkeeping (CPU reference): batch-independent bytes owned by `owner`.
  constexpr void add_host(std::int64_t bytes, std::int64_t& owner) {
    owner += bytes;
    live += bytes;
    live_fixed += bytes;
    note_peak(0, 0);
  }
  constexpr void drop_host(std::int64_t& owner) {
    live -= owner;
    live_fixed -= owner;
    owner = 0;
  }

  // --- autograd nodes --------------------------------------------------------------------------
  /// Records a node for `out` (or, while re-running a checkpointed block, returns the node the
  /// original forward recorded at this position). Returns -1 when nothing needs a gradient.
  constexpr std::int32_t record(const value& out) {
    if (!out.requires_grad) return -1;
    if (replay_cursor >= 0) return last_recorded = replay_cursor++;
    autograd_nodes.push_back(node_record{.out = out.id, .segment = dropping_saves_for, .layer = current_layer});
    if (count_host) add_host(host.node, autograd_nodes.back().host_bytes);
    return last_recorded = static_cast<std::int32_t>(autograd_nodes.size_ - 1);
  }
  /// The node just recorded for `v` (-1 if `v` needs no gradient).
  constexpr std::int32_t record_of(const value& v) const { return v.requires_grad ? last_recorded : -1; }
  constexpr node_record& node(std::int32_t n) { return autograd_nodes.data_[(n)]; }

  /// `n` saves `v` for backward (dropped while forwarding a checkpointed block); `tensors`: how
  /// many saved tensors the storage stands for (host bookkeeping is per tensor).
  constexpr void save(std::int32_t n, const value& v, std::int32_t tensors = 1) {
    if (n < 0 || v.id < 0) return;
    if (dropping_saves_for >= 0 && replay_cursor < 0) {
      // under a non-reentrant checkpoint each saved slot still holds a packed placeholder
      // (SavedVariable + the checkpoint frame's entry): host bookkeeping, op_rules.md §5
      if (count_host) add_host(tensors * host.saved_tensor, node(n).host_bytes);
      return;
    }
    auto& nd = autograd_nodes.data_[(n)];
    for (std::int32_t k = 0; k < nd.saved_count; ++k)
      if (saved_ids.data_[(nd.saved_begin + k)] == v.id) return;  // one storage once per node
    if (nd.saved_count == 0) nd.saved_begin = static_cast<std::int32_t>(saved_ids.size_);
    // a node's saves are recorded together, right after the node (each rule does so)
    else if (nd.saved_begin + nd.saved_count != static_cast<std::int32_t>(saved_ids.size_)) fail("gpubudget: internal: saves not contiguous");
    saved_ids.push_back(v.id);
    ++nd.saved_count;
    if (count_host && replay_cursor < 0) add_host(tensors * host.saved_tensor, nd.host_bytes);
    auto& st = storages.data_[(v.id)];
    if (st.saved++ == 0) saved_total += st.bytes;  // the input batch counts too: autograd keeps it
  }
  /// Drops every saved reference of node `n` (after its backward ran).
  constexpr void release_saved(std::int32_t n) {
    auto& nd = node(n);
    for (std::int32_t k = 0; k < nd.saved_count; ++k) {
      const auto id = saved_ids.data_[(nd.saved_begin + k)];
      auto& st = storages.data_[(id)];
      if (--st.saved == 0) saved_total -= st.bytes;
      maybe_free(id);
    }
    nd.saved_count = 0;
  }
  /// The nodes recorded from `first` on belong to a branch whose output nobody uses, and its last
  /// reference is gone: PyTorch frees that graph, and what it saved, there and then (a dead
  /// branch of a forward), not when backward would have reached it.
  constexpr void drop_dead_graph(std::int32_t first) {
    if (replay_cursor >= 0) return;  // a checkpoint's re-run: the original forward dropped it already
    for (auto n = first; n < static_cast<std::int32_t>(autograd_nodes.size_); ++n) {
      release_saved(n);
      if (count_host) drop_host(autograd_nodes.data_[n].host_bytes);
    }
  }
  /// `n` saves `tensors` tensors of `bytes` each that it creates itself (mask, indices,
  /// statistics), stored as one storage (each rounded to the allocator's blocks on its own).
  constexpr void save_new(std::int32_t n, std::int64_t bytes, std::int32_t tensors = 1, bool fixed = false) {
    if (n < 0) return;
    if (dropping_saves_for >= 0 && replay_cursor < 0) {
      transient(bytes, fixed);
      if (count_host) add_host(tensors * host.saved_tensor, node(n).host_bytes);  // the placeholder (see save)
      return;
    }
    const auto all = checked_mul(bytes, tensors);
    value v{allocate(all, false, checked_mul(round_block(bytes), tensors), fixed ? all : 0), {}, dtype::fp32, false};
    save(n, v, tensors);
    release(v);
  }
  /// `n` saves `tensors` resident buffers of `bytes` each (BatchNorm's running statistics, an index buffer):
  /// counted as saved for backward, allocates nothing during the step. `again`: the same buffers,
  /// saved by a later call of the module (a shared trunk, a per-frame CNN): one storage, counted by
  /// the first call; each call's saved slots still cost their host bookkeeping (op_rules.md 2.6 #69).
  constexpr void save_resident(std::int32_t n, std::int64_t bytes, std::int32_t tensors = 1, bool again = false) {
    if (n < 0) return;
    if (again) {
      if (count_host && replay_cursor < 0) add_host(tensors * host.saved_tensor, node(n).host_bytes);
      return;
    }
    value r{allocate(checked_mul(bytes, tensors), true), {}, dtype::fp32, false};
    save(n, r, tensors);
    release(r);
  }
  /// `n` produces the gradient of input `v` (if `v` needs one).
  constexpr void grad_to(std::int32_t n, const value& v, bool alias = false, bool expand = false) {
    if (n < 0 || !v.requires_grad || replay_cursor >= 0) return;
    auto& nd = autograd_nodes.data_[(n)];
    if (nd.inputs == 0) nd.edges_begin = static_cast<std::int32_t>(edges.size_);
    // a node's edges are recorded together, right after the node (each rule does so)
    else if (nd.edges_begin + nd.inputs != static_cast<std::int32_t>(edges.size_)) fail("gpubudget: internal: edges not contiguous");
    edges.push_back(grad_edge{v.id, bytes_of_value(v), alias, v.chunk, expand});
    ++nd.inputs;
  }
  /// `n` produces the gradient of parameters identified by `key` (same key = same weights);
  /// `second` of `bytes` belong to a second tensor (a bias).
  constexpr void param_grads(std::int32_t n, std::int64_t bytes, std::int32_t key, std::int64_t second = 0) {
    if (n < 0 || replay_cursor >= 0 || bytes == 0) return;
    auto& nd = autograd_nodes.data_[(n)];
    nd.param_grad_bytes += bytes, nd.param_grad_second += second, nd.param_key = key;
  }
  /// Under autocast `n` computes `bytes` of 16-bit gradient for its cast parameters: alive while
  /// it runs (a backward temporary) and until the casts' backward has made the fp32 .grad of it.
  constexpr void cast_param_grads(std::int32_t n, std::int64_t bytes, std::int64_t second = 0) {
    if (n < 0 || replay_cursor >= 0) return;
    node(n).cast_grad_bytes += bytes, node(n).cast_grad_second += second, ++node(n).cast_grad_blocks;
    backward_temp(n, bytes, true);
  }
  /// `out` is a strided view of `x` (transpose, permute): when the node that made `x` wants its
  /// gradient contiguous, its backward holds a contiguous copy of it (node_record::contiguous_grad).
  constexpr void strided_view_of(const value& x) {
    if (const auto n = record_of(x); n >= 0 && node(n).out == x.id && node(n).contiguous_grad) backward_temp(n, bytes_of_value(x));
  }
  constexpr void backward_temp(std::int32_t n, std::int64_t bytes, bool fixed = false) {
    if (n < 0 || replay_cursor >= 0) return;
    node(n).backward_temp += bytes, ++node(n).backward_temp_blocks;
    if (fixed) node(n).backward_temp_fixed += bytes;
  }
  /// `n`'s backward asks for optional library workspaces (optional_workspace): `first`, freed,
  /// then `then` (cuDNN's backward-data, then its weight gradient).
  constexpr void backward_workspace(std::int32_t n, std::int64_t first, std::int64_t then, std::int64_t then_fallback = 0) {
    if (n < 0 || replay_cursor >= 0) return;
    node(n).backward_workspace = first, node(n).backward_workspace_then = then, node(n).backward_workspace_then_fallback = then_fallback;
  }

  /// The batch's int64 edge lists (source, destination) for graphs of `edges` edges: data, like
  /// the input, created once and shared by every graph layer (each saved index counts once).
  dyn_array<std::int64_t> edge_cache{};  // triples: edges, src id, dst id
  struct edge_pair { std::int32_t src, dst; };
  constexpr edge_pair edge_lists(std::int64_t edges) {
    for (std::size_t k = 0; k + 2 < edge_cache.size(); k += 3)
      if (edge_cache[k] == edges) return {static_cast<std::int32_t>(edge_cache[k + 1]), static_cast<std::int32_t>(edge_cache[k + 2])};
    const auto bytes = checked_mul(batch, bytes_of(edges, dtype::int64));
    const auto a = allocate(bytes, true), b = allocate(bytes, true);
    edge_cache.push_back(edges);
    edge_cache.push_back(a);
    edge_cache.push_back(b);
    edge_bytes += 2 * bytes;
    return {a, b};
  }

  /// Releases a phantom (see walker::add_phantom) when backward passes it.
  constexpr void release_phantom(std::int32_t n) {
    auto& nd = node(n);
    if (nd.saved_count == 0) return;
    const auto id = saved_ids.data_[(nd.saved_begin)];
    --storages.data_[(id)].saved;
    saved_total -= nd.phantom_saved;
    maybe_free(id);
    nd.saved_count = 0;
  }

  /// Keeps `id` alive until the forward pass ends (autocast's weight-cast cache).
  dyn_array<std::int32_t> forward_cache{};
  /// Tensors the model's output object holds beside the output itself (transformers'
  /// past_key_values: its DynamicCache's k and v), released with the output.
  dyn_array<std::int32_t> output_cache{};
  constexpr void hold_with_output(std::int32_t id) {
    retain(id);
    output_cache.push_back(id);
  }
  constexpr void release_output_cache() {
    for (auto id : output_cache) release(id);
    output_cache.clear();
  }
  constexpr void cache_until_forward_ends(std::int32_t id) { forward_cache.push_back(id); }
  constexpr void end_forward() {
    for (auto id : forward_cache) release(id);
    forward_cache.clear();
  }

  /// Tensors a model computes once per forward, before its layers, and passes to every layer
  /// that uses them (RoPE's cos/sin in transformers >= 4.38): one storage per (tokens, width,
  /// type, which), held by the forward until it ends and by each node that saves it. A
  /// checkpointed block receives them as inputs: it holds them (PyTorch 2.6: saves them, its
  /// NoopSaveInputs node, op_rules.md 2.6 #18) until its own backward has run.
  dyn_array<std::int64_t> shared_inputs{};   // quintuples: tokens, width, type, which, storage id
  dyn_array<std::int32_t> segment_inputs{};  // triples: segment (-1: released), storage id, counted as saved (0/1)
  /// Bytes of the shared inputs (shared_input) that some node keeps for backward.
  constexpr std::int64_t shared_inputs_saved() const {
    std::int64_t bytes = 0;
    for (std::size_t k = 4; k < shared_inputs.size(); k += 5) {
      const auto& st = storages.data_[(shared_inputs[k])];
      if (st.alive && st.saved > 0) bytes += st.bytes;
    }
    return bytes;
  }
  /// A new reference to the shared input `which` of [tokens, width] per sample in type `t`.
  /// `per_sample` false: one [tokens, width] tensor for the whole batch (a causal mask).
  /// `any_type`: the first one made serves every later use whatever its type (nn.TransformerEncoder
  /// converts its key padding mask once, in its input's dtype, for all its layers).
  /// `by_keyword`: a checkpointed block gets it as a keyword argument (transformers'
  /// GradientCheckpointingLayer binds kwargs in a functools.partial): held until the block's
  /// recomputation, not saved through the checkpoint's NoopSaveInputs (op_rules.md L28).
  constexpr value shared_input(std::int64_t tokens, std::int64_t width, dtype t, std::int64_t which, bool per_sample = true,
                               bool any_type = false, bool by_keyword = false) {
    std::int32_t id = -1;
    for (std::size_t k = 0; k + 4 < shared_inputs.size(); k += 5)
      if (shared_inputs[k] == tokens && shared_inputs[k + 1] == width && (any_type || shared_inputs[k + 2] == static_cast<std::int64_t>(t)) &&
          shared_inputs[k + 3] == which && storages.data_[(shared_inputs[k + 4])].alive)
        id = static_cast<std::int32_t>(shared_inputs[k + 4]), t = static_cast<dtype>(shared_inputs[k + 2]);
    const shape sh = make_shape(tokens, width);
    if (id < 0) {
      // the forward's own reference, dropped when it ends; one for the whole batch does not grow with it
      const auto bytes = per_sample ? bytes_of_value(sh, t) : bytes_of(sh.numel(), t);
      id = allocate(bytes, false, -1, per_sample ? 0 : bytes);
      for (auto v : {tokens, width, static_cast<std::int64_t>(t), which, static_cast<std::int64_t>(id)}) shared_inputs.push_back(v);
      cache_until_forward_ends(id);
    }
    retain(id);
    if (dropping_saves_for >= 0 && replay_cursor < 0) hold_for_segment(id, !by_keyword);
    return value{id, sh, t, false};
  }
  /// The checkpoint segment being forwarded holds `id` until its recomputation; `saved`: through
  /// NoopSaveInputs, which saved-tensor hooks see (2.x; a positional argument).
  constexpr void hold_for_segment(std::int32_t id, bool saved = true) {
    for (std::size_t k = 0; k + 2 < segment_inputs.size(); k += 3)
      if (segment_inputs[k] == dropping_saves_for && segment_inputs[k + 1] == id) return;
    const bool counted = saved && torch2();
    for (auto v : {dropping_saves_for, id, std::int32_t{counted}}) segment_inputs.push_back(v);
    retain(id);
    if (counted && storages.data_[(id)].saved++ == 0) saved_total += storages.data_[(id)].bytes;
  }
  /// Segment `seg`'s backward has run: it lets go of the shared inputs it held.
  constexpr void release_segment_inputs(std::int32_t seg) {
    for (std::size_t k = 0; k + 2 < segment_inputs.size(); k += 3) {
      if (segment_inputs[k] != seg) continue;
      auto& st = storages.data_[(segment_inputs[k + 1])];
      if (segment_inputs[k + 2] != 0 && --st.saved == 0) saved_total -= st.bytes;
      release(segment_inputs[k + 1]);
      segment_inputs[k] = -1;
    }
  }

};

/// The hook behind timeline(): one moment, split into .grad, saved and the rest. saved_total
/// also counts storages outside the live bytes (the input batch, resident buffers a node saves):
/// those are taken out, and what is left is bounded by the non-gradient live bytes (a phantom's
/// saved share may include its copies' resident buffers).
constexpr void record_timeline_moment(sim& s, const live_point& p) {
  auto& rec = *s.recorder;
  for (; rec.scanned < s.storages.size_; ++rec.scanned)
    if (s.storages[rec.scanned].external) rec.external_ids.push_back(static_cast<std::int32_t>(rec.scanned));
  std::int64_t outside = 0;
  for (auto id : rec.external_ids)
    if (const auto& st = s.storages.data_[(id)]; st.saved > 0) outside += st.bytes;
  const auto room = s.live - s.grads_live;
  const auto saved = s.saved_total - outside;
  rec.moments.push_back(moment{p.total, s.grads_live, saved < 0 ? 0 : saved > room ? room : saved, s.current_layer, s.in_backward});
}

}  // namespace gpubudget::detail
