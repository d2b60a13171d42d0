// gpubudget/detail/allocator_replay.hpp — the simulated step run through the caching allocator
// model (caching_allocator.hpp), the way benchmarks/gpu/measure_cuda.py runs a case.
//
// The measured process allocates the model (model.to(device): every parameter tensor, then the
// buffers and the batch), runs a warm-up step (its forward's first matmul creates the main
// thread's cuBLAS workspace, backward's the autograd device thread's; optimizer.step() creates the
// optimizer state), zero_grad(set_to_none=True), then the measured step. max_memory_reserved is
// the high-water mark of that whole run (the traces' segment_alloc events: the warm-up step sets
// most of it). The step's allocations and frees come from the liveness walk itself: storages in
// allocation order, each freed right before the storage allocated after it (sim::storage::
// freed_at), and the op temporaries between them. The main thread's cuBLAS workspace comes at the
// forward's first GEMM (sim::first_cublas_at: a CNN's classifier, a Llama's rotary tables right
// after the embedding), not at its start (op_rules.md A3).
#pragma once
#include <array>
#include <cstdint>

#include <gpubudget/detail/caching_allocator.hpp>
#include <gpubudget/detail/sim.hpp>

namespace gpubudget::detail {

/// transformers' generate() after its prefill (serving_engine::hf), as the caching allocator sees
/// it: the LM head's weight (the prefill's walk budgets the body), every forward's logits, and each
/// decode step's DynamicCache concatenations (cache_utils.py DynamicLayer.update: `torch.cat`
/// makes a layer's grown K, then its grown V, each replacing the one before; a sliding-window
/// layer's storage holds min(window, tokens) tokens). The steps' requests of the small pool
/// (one token's activations, input_ids and the attention mask grown by a column) are left out:
/// the prefill's small segments serve them.
struct decode_stream {
  bool active = false;
  std::int64_t steps = 0;        ///< decode forwards after the prefill (new tokens - 1)
  std::int64_t prompt = 0;       ///< tokens each layer caches after the prefill
  std::int64_t token_bytes = 0;  ///< one layer's K (or V) per token, every sequence
  std::int64_t window = 0;       ///< a sliding layer's window (0: none)
  std::int32_t layers = 0;
  std::int32_t full_every = 1;   ///< with a window: every full_every-th layer attends fully (1: none does)
  std::int64_t head_weight = 0;  ///< lm_head.weight, allocated with the model (0: tied to the embedding)
  /// Each forward's logits of the last position (16-bit, held by the output until the loop's
  /// `del outputs`) and generate's fp32 copy of them
  std::int64_t logits = 0, logits_fp32 = 0;
  /// A padded batch's decode step repeats a layer's grown K and V to every head for its masked
  /// SDPA (repeat_kv, op_rules.md L32): two blocks of this many times the layer's K (0: none)
  std::int64_t repeated_kv = 0;
  /// Is layer `i` a sliding-window layer (Gemma 2/3, OLMo 3: layer_types' period; Mistral: all)?
  constexpr bool sliding(std::int32_t i) const { return window > 0 && (full_every <= 1 || (i + 1) % full_every != 0); }
  /// Tokens layer `i`'s storage holds once it has cached `tokens`.
  constexpr std::int64_t held(std::int32_t i, std::int64_t tokens) const { return sliding(i) && window < tokens ? window : tokens; }
};

/// What the replay needs besides the walk.
struct replay_setup {
  std::int64_t cublas_workspace = 0;  ///< per handle (devices.hpp)
  std::int32_t cublas_handles = 2;    ///< main thread + autograd's device thread
  std::int64_t cap = 0;               ///< allocator cap in bytes (0: none)
  /// Only whether the capped run fits and the blocks it holds (max_micro_batch's probes): the
  /// capped run alone, going on uncapped after an OOM (caching_allocator::lift_cap_after_oom: the
  /// search's distance is the in-use peak of every request). Its reserved peak is then no
  /// measurement's.
  bool fits_only = false;
  std::int64_t buffers = 0, input_batch = 0;
  decode_stream decode{};  ///< generate()'s decode steps after an inference forward (active: the forward is its prefill)
};

struct replay_result {
  std::int64_t reserved_peak = 0;
  bool out_of_memory = false;
  /// The measured step as torch.cuda.memory_allocated sees it (whole blocks: 512 B rounding and
  /// the remainders a large block keeps when it is not split), above the resident blocks:
  /// after forward + loss, the peak through backward, the peak through optimizer.step().
  std::int64_t after_forward = 0, fwd_bwd_peak = 0, step_peak = 0;
  /// torch.cuda.max_memory_allocated over the steps: the resident blocks included.
  std::int64_t total_peak = 0;
};

/// A storage as the replay asks for it: the bytes requested (0: none, an external or empty
/// storage; 512 B rounding a sliced storage's own) and the storage it is freed before (-1: kept).
struct tape_storage {
  std::int64_t request = 0;
  std::int32_t freed_at = -1;
};

/// A read-only run of a tape's elements (over a dyn_array or a std::array): public data_ and
/// size_ as dyn_array's, so the replay's loops index it without a call.
template <class T>
struct tape_span {
  const T* data_ = nullptr;
  std::size_t size_ = 0;
  constexpr std::size_t size() const { return size_; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
};

/// What the replay reads of the walk (sim's fields of the same names): the storages in allocation
/// order, the op temporaries, the tensors model.to allocates, and where the cuBLAS workspaces come.
struct replay_tape {
  tape_span<tape_storage> storages{};
  tape_span<std::int64_t> temporaries{}, base_weight_tensors{}, parameter_tensors{}, own_type_tensors{};
  std::int32_t first_cublas_at = -1, backward_starts_at = -1;
  dtype parameter_type = dtype::fp32;
  /// The storages sorted by when they are freed (sort_frees), where a frozen tape keeps them;
  /// empty: each step_replay sorts them itself.
  tape_span<std::int32_t> free_begin{}, freed{};
  /// An inference forward's tensors held with its output (the DynamicCache's K and V of each
  /// layer, in order), alive when the forward ends
  tape_span<std::int32_t> output_cache{};
};

/// Counting sort of `storages` by freed_at: `freed[free_begin[k] .. free_begin[k + 1])` are the
/// storages freed right before storage k. `free_begin` has room for n + 2, `freed` for n, both zeros.
constexpr void sort_frees(tape_span<tape_storage> storages, std::int32_t* free_begin, std::int32_t* freed) {
  const auto n = storages.size_;
  for (std::size_t k = 0; k < n; ++k)
    if (storages.data_[k].freed_at >= 0) ++free_begin[static_cast<std::size_t>(storages.data_[k].freed_at) + 1];
  for (std::size_t k = 1; k < n + 2; ++k) free_begin[k] += free_begin[k - 1];
  dyn_array<std::int32_t> next{};
  next.assign(free_begin, n + 1);
  for (std::size_t k = 0; k < n; ++k)
    if (const auto at = storages.data_[k].freed_at; at >= 0) freed[static_cast<std::size_t>(next.data_[static_cast<std::size_t>(at)]++)] = static_cast<std::int32_t>(k);
}

/// The request a storage makes of the allocator (tape_storage::request).
constexpr std::int64_t request_of(const storage& st) {
  return st.external || st.bytes <= 0 ? 0 : st.rounded == sim::round_block(st.bytes) ? st.bytes : st.rounded;
}

/// The walk `s` as the replay reads it; `storages` receives the storages' requests.
constexpr replay_tape tape_of(const sim& s, dyn_array<tape_storage>& storages) {
  storages.reserve(s.storages.size_);
  for (const auto& st : s.storages) storages.push_back(tape_storage{request_of(st), st.freed_at});
  auto span = [](const dyn_array<std::int64_t>& a) { return tape_span<std::int64_t>{a.data_, a.size_}; };
  return replay_tape{{storages.data_, storages.size_}, span(s.temporaries), span(s.base_weight_tensors), span(s.parameter_tensors),
                     span(s.own_type_tensors), s.first_cublas_at, s.backward_starts_at, s.types.parameters, {}, {},
                     {s.output_cache.data_, s.output_cache.size_}};
}

/// One pass of the step's storages through the allocator; `handles[k]` keeps each block.
/// `first`: the warm-up step, which also creates the cuBLAS workspaces.
class step_replay {
 public:
  constexpr step_replay(const replay_tape& s, caching_allocator& a, const replay_setup& setup) : s_(s), a_(a), setup_(setup) { bucket_frees(); }

  /// Where a step stands between two storages: the next storage and op temporary, the cuBLAS
  /// workspaces made, the allocated bytes when backward started, the temporaries held until the
  /// next storage. What a replay split over constant evaluations carries (budget_of.hpp).
  struct position {
    std::size_t storage = 0, temporary = 0;
    std::int32_t workspaces = 0;
    std::int64_t allocated_after_forward = 0;
    std::array<std::int32_t, 4> held{-1, -1, -1, -1};
    bool holding = false;  ///< held holds any (free_held has work)
  };

  /// A whole step (`first`: the warm-up).
  constexpr void run(bool first) {
    restart();
    run_until(first, s_.storages.size_ + 1);
  }
  /// The next step starts (the one before released every storage).
  constexpr void restart() { pos_ = position{.workspaces = pos_.workspaces}; }
  /// The step's storages from where it stands up to `to` (exclusive; storages + 1: the step's
  /// end, its last temporaries and frees included).
  constexpr void run_until(bool first, std::size_t to) {
    const auto n = s_.storages.size_;
    const auto main_thread_at = s_.first_cublas_at >= 0 ? s_.first_cublas_at : 0;  // no GEMM noted: the forward's start
    // (the arrays indexed through data_: this loop runs per storage, three steps or more)
    for (std::size_t k = pos_.storage; k < to; ++k) {
      for (; pos_.temporary + 3 < s_.temporaries.size_ && s_.temporaries.data_[pos_.temporary] == static_cast<std::int64_t>(k); pos_.temporary += 4)
        temporaries(pos_.temporary);
      for (auto f = free_begin_[k]; f < free_begin_[k + 1]; ++f) release(static_cast<std::size_t>(freed_[f]));
      if (first && (static_cast<std::int32_t>(k) == main_thread_at || static_cast<std::int32_t>(k) == s_.backward_starts_at) &&
          pos_.workspaces < setup_.cublas_handles) {
        if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('B', static_cast<std::int64_t>(k), -1);  // cuBLAS
        a_.malloc(setup_.cublas_workspace), ++pos_.workspaces;
      }
      if (static_cast<std::int32_t>(k) == s_.backward_starts_at) pos_.allocated_after_forward = a_.allocated();
      if (k == n) return free_held(), void(pos_.storage = n + 1);
      handle_.data_[k] = malloc_storage(k);
      free_held();  // the temporaries storage k outlives
    }
    pos_.storage = to;
  }
  /// Has the step run to its end?
  constexpr bool step_done() const { return pos_.storage > s_.storages.size_; }
  constexpr const position& where() const { return pos_; }
  /// The block each storage holds (-1: none), to carry with where().
  constexpr tape_span<std::int32_t> handles() const { return {handle_.data_, handle_.size_}; }
  /// A step that resumes where an earlier evaluation left it.
  constexpr void resume(const position& p, tape_span<std::int32_t> handles) {
    pos_ = p;
    copy_elements(handle_.data_, handles.data_, handles.size_);
  }
  /// Allocated bytes when backward started (forward and the loss done); an inference forward's at
  /// its end (its output and what the output holds still allocated).
  constexpr std::int64_t allocated_after_forward() const { return s_.backward_starts_at >= 0 ? pos_.allocated_after_forward : a_.allocated(); }
  /// zero_grad(set_to_none=True) and the step's other survivors: every storage still held.
  constexpr void release_survivors() {
    for (std::size_t k = 0; k < s_.storages.size(); ++k)
      if (s_.storages[k].freed_at < 0) release(k);
  }
  /// The cuDNN calls on their fallback plan (refused_'s pairs), to carry into a later evaluation.
  constexpr tape_span<std::int64_t> refused() const { return {refused_.data_, refused_.size_}; }
  /// A replay that resumes: the refusals an earlier evaluation's passes made.
  constexpr void restore_refused(tape_span<std::int64_t> r) {
    for (auto v : r) refused_.push_back(v);
  }

 private:
  const replay_tape& s_;
  caching_allocator& a_;
  const replay_setup& setup_;
  dyn_array<std::int32_t> handle_{};
  const std::int32_t* free_begin_ = nullptr;  ///< frees before storage k: freed_[free_begin_[k], free_begin_[k+1])
  const std::int32_t* freed_ = nullptr;
  dyn_array<std::int32_t> own_free_begin_{}, own_freed_{};  ///< the sort, where the tape keeps none
  dyn_array<std::int64_t> refused_{};  ///< cuDNN calls on their fallback plan: (workspace bytes, kind) pairs
  position pos_{};

  /// Op temporaries: allocated together, freed together (blocks < 0: one optional workspace),
  /// now or, held, once the next storage is allocated.
  constexpr void temporaries(std::size_t t) {
    std::array<std::int32_t, 4> held{-1, -1, -1, -1};
    const auto blocks = s_.temporaries[t + 2], kept = blocks < 4 ? blocks : 4;
    if (blocks < 0) return optional_workspace(s_.temporaries[t + 1], blocks, s_.temporaries[t + 3]);
    for (std::int64_t b = 0; b < kept; ++b)  // past four, the last block stands for the rest
      held[static_cast<std::size_t>(b)] = a_.malloc(s_.temporaries[t + 1] * (b + 1 < kept ? 1 : blocks - kept + 1));
    if (s_.temporaries[t + 3] != 0) return free_held(), void(pos_.held = held), void(pos_.holding = true);
    for (auto h : held) a_.free(h);
  }
  /// cuDNN's plan cache (Conv_v8.cpp: benchmark_cache, run_single_conv, try_configs; op_rules.md
  /// A20): the plan that first ran for a convolution call is the one its later calls run, in every
  /// later step. A workspace the cap refuses (the allocator released its cache and still had no
  /// room) makes cuDNN run its fallback engine, with the fallback's workspace, and that plan is
  /// the one cached: the call asks for no more than it from then on, however much is free again
  /// (ResNet-34 AMP bf16 b901, 16 GiB: 82 refusals in layer4's first backward of the second step,
  /// none in the steps after). The key is the call's kind and workspace bytes (the shapes' proxy);
  /// only refused keys are kept, so an uncapped replay scans an empty list.
  constexpr void optional_workspace(std::int64_t bytes, std::int64_t kind, std::int64_t fallback) {
    for (std::size_t k = 0; k + 1 < refused_.size_; k += 2)
      if (refused_.data_[k] == bytes && refused_.data_[k + 1] == kind) return a_.free(a_.try_malloc(fallback));
    if (const auto h = a_.try_malloc(bytes); h >= 0) return a_.free(h);
    refused_.push_back(bytes), refused_.push_back(kind);
    a_.free(a_.try_malloc(fallback));
  }
  constexpr void free_held() {
    if (!pos_.holding) return;  // run_until() asks after every storage, and mostly nothing is held
    for (auto& h : pos_.held) a_.free(h), h = -1;
    pos_.holding = false;
  }
  constexpr std::int32_t malloc_storage(std::size_t k) {
    const auto request = s_.storages.data_[k].request;
    return request <= 0 ? -1 : a_.malloc(request);
  }
  constexpr void release(std::size_t k) {
    a_.free(handle_.data_[k]), handle_.data_[k] = -1;
  }

  /// The storages by when they are freed: the tape's own sort where it keeps one (a frozen tape:
  /// sorted once, not in every evaluation of a split replay, whose 27,000 storages at issue I's
  /// 5,000 layers cost Clang's whole step limit to sort), else sorted here.
  constexpr void bucket_frees() {
    const auto n = s_.storages.size();
    handle_.resize(n, -1);
    if (s_.free_begin.size_ != n + 2 || s_.freed.size_ != n) {
      own_free_begin_.resize(n + 2, 0), own_freed_.resize(n, 0);
      sort_frees(s_.storages, own_free_begin_.data_, own_freed_.data_);
      free_begin_ = own_free_begin_.data_, freed_ = own_freed_.data_;
      return;
    }
    free_begin_ = s_.free_begin.data_, freed_ = s_.freed.data_;
  }
};

/// optimizer.step(): the state it creates on the first step (per trainable tensor, in order) and
/// its temporaries (budget.hpp's optimizer_temporaries, as blocks: the for-loop step's two per
/// tensor, the foreach step's one per tensor at once).
/// A trainable tensor in a type of its own (s.own_type_tensors) has state and temporaries of its
/// own bytes (zeros_like(param)); the others in `state_type` (training::optimizer_state_type).
/// Resumable, as step_replay is: run_until(k) does the work of tensors up to k (the state's,
/// then the temporaries'), so a split replay can spread a large model's step over evaluations.
class optimizer_step {
 public:
  struct settings {
    std::int64_t state_per_element = 0, temps_per_tensor = 0;
    bool foreach = false;
    dtype state_type = dtype::fp32;
  };
  constexpr optimizer_step(caching_allocator& a, const replay_tape& s, bool first, const settings& o) : a_(a), first_(first), o_(o) {
    for (auto e : s.parameter_tensors) if (e > 0) trained_.push_back(bytes_of(e, o.state_type));
    for (auto bytes : s.own_type_tensors) trained_.push_back(bytes);
  }
  /// Units of work: one per tensor for the state (the first step), one per tensor for the temporaries.
  constexpr std::size_t work() const { return (first_ ? 2 : 1) * trained_.size_; }
  constexpr bool done() const { return next_ >= work(); }
  constexpr std::size_t next() const { return next_; }
  /// The foreach step's temporaries held so far (freed together at its end), to carry with next().
  constexpr tape_span<std::int32_t> held() const { return {temps_.data_, temps_.size_}; }
  constexpr void resume(std::size_t next, tape_span<std::int32_t> held) {
    next_ = next;
    for (auto h : held) temps_.push_back(h);
  }
  /// The work up to unit `to` (at most work()); at the end, the foreach temporaries freed.
  constexpr void run_until(std::size_t to) {
    for (const auto n = trained_.size_, state_units = first_ ? n : 0; next_ < to && next_ < work(); ++next_) {
      if (next_ < state_units) {
        for (std::int64_t k = 0; k < o_.state_per_element / 4; ++k) a_.malloc(trained_.data_[next_]);
        continue;
      }
      for (std::int64_t k = 0; k < o_.temps_per_tensor; ++k) temps_.push_back(a_.malloc(trained_.data_[next_ - state_units]));
      if (!o_.foreach) free_temps();
    }
    if (done()) free_temps();
  }

 private:
  caching_allocator& a_;
  bool first_;
  settings o_;
  dyn_array<std::int64_t> trained_{};  ///< bytes of each trainable tensor's state (and temporary), in step() order
  dyn_array<std::int32_t> temps_{};
  std::size_t next_ = 0;
  constexpr void free_temps() {
    for (auto t : temps_) a_.free(t);
    temps_.clear();
  }
};

/// generate()'s loop after the prefill's storages (decode_stream): `cache` holds the blocks of
/// each layer's K and V (the prefill's output cache, in order), which every decode step replaces.
class decode_replay {
 public:
  constexpr decode_replay(caching_allocator& a, const decode_stream& d) : a_(a), d_(d) {}
  /// The prefill's logits, then every decode step; `cache`'s blocks end as the last step's.
  constexpr void run(dyn_array<std::int32_t>& cache) {
    logits();
    for (std::int64_t t = 0; t < d_.steps; ++t) {
      const auto tokens = d_.prompt + t + 1;
      for (std::int32_t i = 0; i < d_.layers; ++i) {
        const auto bytes = checked_mul(d_.held(i, tokens), d_.token_bytes);
        for (std::size_t kv = 0; kv < 2; ++kv) {
          auto& h = cache.data_[2 * static_cast<std::size_t>(i) + kv];
          const auto grown = a_.malloc(bytes);
          a_.free(h), h = grown;
        }
        if (d_.repeated_kv > 0) {  // repeat_kv's K and V for the layer's SDPA, gone when it returns
          const auto k = a_.malloc(checked_mul(d_.repeated_kv, bytes)), v = a_.malloc(checked_mul(d_.repeated_kv, bytes));
          a_.free(v), a_.free(k);
        }
      }
      logits();
    }
  }

 private:
  caching_allocator& a_;
  const decode_stream& d_;
  /// A forward's logits (held by its output), generate's fp32 copy, both gone when the loop's
  /// iteration ends (`del outputs`; the copy's scores give the next token).
  constexpr void logits() {
    const auto held = a_.malloc(d_.logits), copy = a_.malloc(d_.logits_fp32);
    a_.free(copy), a_.free(held);
  }
};

}  // namespace gpubudget::detail
