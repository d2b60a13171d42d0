// gpubudget/detail/caching_allocator.hpp — a constexpr model of PyTorch's CUDA caching allocator.
//
// Follows c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.x, DeviceCachingAllocator::malloc / free):
// requests are rounded (round_size), served from the small (<= 1 MiB) or large pool by best fit
// (get_free_block: the smallest cached free block that is large enough, with the max_split_size
// rules), split when the remainder is worth keeping (should_split), merged with free neighbours
// when freed (free_block / try_merge_blocks); when nothing cached fits, a new segment is
// cudaMalloc'd (get_allocation_size) or, with expandable_segments, the pool's one segment maps
// more pages (try_allocate_expandable_block / map_block). Under a cap (set_per_process_memory_
// fraction) a segment that would pass it first frees every cached whole segment and retries
// (release_cached_blocks) before it reports an OOM.
//
// Simplifications: one device, one stream, no CUDA events; blocks are ordered by (size, segment,
// offset) where PyTorch orders by (size, address): equal-size ties may pick another block.
#pragma once
#include <array>
#include <cstdint>
#include <type_traits>

#include <gpubudget/alloc_conf.hpp>
#include <gpubudget/base/diagnostics.hpp>
#include <gpubudget/base/dyn_array.hpp>
#include <gpubudget/probe/caching_allocator_model.hpp>

namespace gpubudget {
namespace detail {

namespace pa = probe::pytorch_allocator;

/// A debugging tap, run time only (never read in a constant evaluation): when set, every replay's
/// start ('R': its cap), request ('+': bytes asked, the block's handle), free ('-': handle) and new
/// segment ('S': bytes), released segment ('F': bytes, under a cap) and cuBLAS workspace ('B': the
/// storage it comes before; allocator_replay.hpp) is reported. The CLI sets it for GPUBUDGET_ALLOCATOR_EVENTS=FILE, to set the replay's
/// requests beside a measured trace's (benchmarks/gpu/compare_allocator_events.py).
inline void (*allocator_event_tap)(char what, std::int64_t bytes, std::int32_t handle) = nullptr;

/// A second tap, run time only, for replaying a measured trace (tests/unit/test_caching_allocator.cpp):
/// when set, it gives the device address of the model's k-th segment (the trace's k-th
/// segment_alloc), and equal-size free blocks are ordered by address as PyTorch's
/// BlockComparatorSize orders them. Without it they are ordered by segment, oldest first: cudaMalloc's
/// addresses are not in allocation order (they mostly fall, and small segments fill gaps), so
/// which of two equal cached blocks PyTorch takes is the driver's choice.
inline std::int64_t (*segment_address_tap)(std::int32_t segment) = nullptr;

/// floor(log2(v)), 0 for v <= 1 (the builtin: a loop cost constant evaluation a step per bit).
constexpr std::int32_t log2_floor(std::int64_t v) { return v > 1 ? 63 - __builtin_clzll(static_cast<unsigned long long>(v)) : 0; }
/// Largest power of two <= v (v > 0).
constexpr std::int64_t power2_floor(std::int64_t v) { return std::int64_t{1} << log2_floor(v); }

/// AcceleratorAllocatorConfig::roundup_power2_divisions(size): intervals from 1 MiB to 64 GiB.
constexpr std::int64_t divisions_for(const allocator_settings& a, std::int64_t size) {
  const auto index = log2_floor(size) - 20;
  return a.roundup_power2_divisions[static_cast<std::size_t>(index < 0 ? 0 : index > 15 ? 15 : index)];
}

/// roundup_power2_next_division(size, divisions).
constexpr std::int64_t roundup_power2_next_division(std::int64_t size, std::int64_t divisions) {
  const auto floor = power2_floor(size);
  if (floor == size) return size;
  const auto division = floor / power2_floor(divisions);
  if (division == 0) return floor * 2;
  const auto rounded_floor = size / division * division;
  return rounded_floor == size ? size : rounded_floor + division;
}

/// round_size(size) with the settings' roundup_power2_divisions.
constexpr std::int64_t round_request(const allocator_settings& a, std::int64_t size) {
  if (size < pa::kMinBlockSize) return pa::kMinBlockSize;
  const auto divisions = divisions_for(a, size);
  if (divisions > 1 && size > pa::kMinBlockSize * divisions) return roundup_power2_next_division(size, divisions);
  return pa::round_size(size);
}

/// A segment's piece, free or allocated.
struct allocator_block {
  std::int64_t size = 0, offset = 0;
  std::int32_t segment = 0, prev = -1, next = -1;
  bool allocated = false, small = false, alive = true;
  std::int32_t slot = -1;       ///< index in its free list (-1: not free)
  std::int32_t size_class = 0;  ///< the free list it is in (its size's class when listed)
};

/// The allocator's state: segments cut into blocks, each block free or allocated.
class caching_allocator {
 public:
  constexpr explicit caching_allocator(const allocator_settings& a = {}, std::int64_t cap = 0) : conf_(a), cap_(cap) {
    for (const auto d : a.roundup_power2_divisions) rounds_by_divisions_ = rounds_by_divisions_ || d > 1;
    if (a.max_split_size > 0) max_split_ = a.max_split_size;
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('R', cap, -1);  // a new replay
  }

  /// Allocates `bytes` (a tensor's request); returns the block's handle, -1 on OOM (capped only).
  constexpr std::int32_t malloc(std::int64_t bytes) {
    if (bytes <= 0) return -1;
    const auto size = rounds_by_divisions_ ? round_request(conf_, bytes) : pa::round_size(bytes);
    const bool small = size <= pa::kSmallSize;
    auto b = find_free(size, small);
    if (b < 0) b = more_memory(size, small);
    if (b < 0) {
      oom_ = true;
      if (!std::is_constant_evaluated() && allocator_event_tap && !optional_) allocator_event_tap('O', bytes, -1);  // an OOM
      if (!past_oom_uncapped_ || optional_) return -1;
      cap_ = 0;  // lift_cap_after_oom: the rest of the run as if uncapped
      b = more_memory(size, small);
    }
    unlist(b);
    take(b, size);
    allocated_ += blocks_.data_[b].size, allocated_peak_ = allocated_ > allocated_peak_ ? allocated_ : allocated_peak_;
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('+', bytes, b);
    return b;
  }

  /// A request the caller can do without (cuDNN's try_configs catches the OOM and tries its next
  /// engine): -1 when it does not fit, and no OOM recorded. The cache is released all the same.
  constexpr std::int32_t try_malloc(std::int64_t bytes) {
    const bool was = oom_;
    optional_ = true;
    const auto h = malloc(bytes);
    optional_ = false;
    oom_ = was;
    return h;
  }

  /// After the first out-of-memory (still reported) the cap is lifted and the run goes on as an
  /// uncapped one: max_micro_batch's probes want the blocks every request holds, which a run cut
  /// short by the OOM does not reach, without a second, uncapped replay.
  constexpr void lift_cap_after_oom() { past_oom_uncapped_ = true; }

  /// Frees a block malloc returned (free_block: merged with its free neighbours).
  constexpr void free(std::int32_t h) {
    if (h < 0) return;
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('-', 0, h);
    auto& b = blocks_.data_[h];
    b.allocated = false;
    allocated_ -= b.size;
    merge(h, b.next);
    if (b.prev >= 0 && !blocks_.data_[b.prev].allocated) merge(b.prev, h);
    else list(h);
  }

  /// torch.cuda.empty_cache() (release_cached_blocks): every cached segment with no block in use
  /// goes back to the device. (Expandable segments unmap their free pages instead: not modelled.)
  constexpr void release_cached() {
    for (auto& pool : free_)
      for (auto& free_list : pool)
        for (auto k = free_list.size_; k-- > 0 && !conf_.expandable_segments;)
          if (const auto h = free_list.data_[k]; blocks_.data_[h].prev < 0 && blocks_.data_[h].next < 0) release_segment(h);
  }
  /// torch.cuda.set_per_process_memory_fraction: from now on reserved bytes may not pass `bytes`
  /// (0: no cap).
  constexpr void set_cap(std::int64_t bytes) { cap_ = bytes; }

  constexpr std::int64_t reserved() const { return reserved_; }
  constexpr std::int64_t reserved_peak() const { return reserved_peak_; }
  /// cudaMalloc and cudaFree calls so far (segments made, pages mapped, segments released): a
  /// step that makes none leaves the cache as it found it.
  constexpr std::int64_t device_calls() const { return device_calls_; }
  constexpr std::int64_t allocated() const { return allocated_; }
  constexpr std::int64_t allocated_peak() const { return allocated_peak_; }
  /// torch.cuda.reset_peak_memory_stats() for the allocated bytes.
  constexpr void reset_allocated_peak() { allocated_peak_ = allocated_; }
  constexpr bool out_of_memory() const { return oom_; }

  /// Everything the allocator holds but its settings, in plain arrays of `Cap` blocks: the state
  /// one constant evaluation ends with and the next resumes from (budget_of.hpp's split replay).
  template <std::size_t Cap>
  struct snapshot {
    std::array<allocator_block, Cap> blocks{};  ///< the dead slots among them: alive == false
    std::size_t block_count = 0;
    std::int64_t cap = 0, reserved = 0, reserved_peak = 0, allocated = 0, allocated_peak = 0, device_calls = 0;
    std::int32_t segments = 0;
    std::array<std::int32_t, 2> expandable_tail{-1, -1};
    bool oom = false, past_oom_uncapped = false;
  };
  /// The state, written into `s` for a later evaluation to resume (Cap: at least the block slots;
  /// written in place, since GCC's constant evaluation copies an aggregate element by element).
  template <std::size_t Cap>
  constexpr void save_into(snapshot<Cap>& s) const {
    if (blocks_.size_ > Cap) snapshot_capacity_too_small();
    copy_elements(s.blocks.data(), blocks_.data_, blocks_.size_);
    s.block_count = blocks_.size_;
    s.cap = cap_, s.reserved = reserved_, s.reserved_peak = reserved_peak_, s.allocated = allocated_, s.allocated_peak = allocated_peak_;
    s.device_calls = device_calls_, s.segments = segments_, s.expandable_tail = {expandable_tail_[0], expandable_tail_[1]};
    s.oom = oom_, s.past_oom_uncapped = past_oom_uncapped_;
  }
  /// The allocator `s` saved, under settings `a` (the free lists and the dead slots rebuilt: the
  /// order within them decides nothing, best fit breaks every tie by segment and offset and a
  /// block's slot number is no part of it).
  template <std::size_t Cap>
  constexpr caching_allocator(const allocator_settings& a, const snapshot<Cap>& s) : caching_allocator(a, s.cap) {
    blocks_.resize(s.block_count);
    for (std::size_t k = 0; k < s.block_count; ++k) {
      const auto h = static_cast<std::int32_t>(k);
      blocks_.data_[k] = s.blocks[k];
      if (!blocks_.data_[k].alive) dead_.push_back(h);
      else if (blocks_.data_[k].slot >= 0) list(h);
    }
    reserved_ = s.reserved, reserved_peak_ = s.reserved_peak, allocated_ = s.allocated, allocated_peak_ = s.allocated_peak;
    device_calls_ = s.device_calls, segments_ = s.segments, expandable_tail_[0] = s.expandable_tail[0], expandable_tail_[1] = s.expandable_tail[1];
    oom_ = s.oom, past_oom_uncapped_ = s.past_oom_uncapped;
  }

 private:
  using block = allocator_block;
  allocator_settings conf_;
  std::int64_t cap_ = 0;  ///< allocator cap in bytes (0: none)
  dyn_array<block> blocks_{};
  dyn_array<std::int32_t> dead_{};  ///< slots of merged or released blocks, reused first
  /// The cached free blocks of the large (0) and small (1) pool (PyTorch's BlockPool::blocks),
  /// one list per size class floor(log2(size)), and per pool a mask of the non-empty classes.
  /// PyTorch searches an ordered std::set with lower_bound; a best-fit search here scans the
  /// request's own class and at most the next non-empty one, not the whole cache (constant
  /// evaluation charges a step per block scanned: scanning one list per pool cost a ResNet-50
  /// budget ~200 K steps). Plain arrays: std::array's operator[] costs 5 steps a call.
  static constexpr int size_classes = 64;
  dyn_array<std::int32_t> free_[2][size_classes]{};
  std::uint64_t nonempty_[2]{};
  std::int64_t reserved_ = 0, reserved_peak_ = 0, allocated_ = 0, allocated_peak_ = 0, device_calls_ = 0;
  std::int32_t segments_ = 0;
  std::int32_t expandable_tail_[2]{-1, -1};  ///< last block of each pool's expandable segment
  bool oom_ = false;
  bool optional_ = false;            ///< inside try_malloc
  bool past_oom_uncapped_ = false;   ///< lift_cap_after_oom
  bool rounds_by_divisions_ = false;  ///< any roundup_power2_divisions set (else round_size alone)

  /// max_split_size (none: INT64_MAX), read once: find_free and should_split ask it per request.
  std::int64_t max_split_ = INT64_MAX;

  /// BlockComparatorSize with the measured segments' addresses (segment_address_tap, run time
  /// only): by size, then address.
  static bool before_in_address(const block& a, const block& b) {
    if (a.size != b.size) return a.size < b.size;
    return segment_address_tap(a.segment) + a.offset < segment_address_tap(b.segment) + b.offset;
  }

  /// A slot for a new block: a dead one if any (keeps the block array as small as the state).
  constexpr std::int32_t add_block(const block& b) {
    if (!dead_.empty()) {
      const auto h = dead_.back();
      dead_.pop_back();
      blocks_.data_[h] = b;
      return h;
    }
    blocks_.push_back(b);
    return static_cast<std::int32_t>(blocks_.size_ - 1);
  }
  constexpr void kill(std::int32_t h) { blocks_.data_[h].alive = false, dead_.push_back(h); }
  constexpr void list(std::int32_t h) {
    block& b = blocks_.data_[h];
    auto& free_list = free_[b.small][b.size_class = log2_floor(b.size)];
    b.slot = static_cast<std::int32_t>(free_list.size_), nonempty_[b.small] |= std::uint64_t{1} << b.size_class;
    free_list.push_back(h);
  }
  constexpr void unlist(std::int32_t h) {
    block& b = blocks_.data_[h];
    if (b.slot < 0) return;
    auto& free_list = free_[b.small][b.size_class];
    const auto last = free_list.data_[free_list.size_ - 1];
    free_list.data_[b.slot] = last, blocks_.data_[last].slot = b.slot, b.slot = -1, --free_list.size_;  // pop_back, without a call
    if (free_list.size_ == 0) nonempty_[b.small] &= ~(std::uint64_t{1} << b.size_class);
  }

  /// The smallest block >= size in one free list, ties by segment and offset (BlockComparatorSize;
  /// the segments' order stands for their addresses), -1: none.
  constexpr std::int32_t best_in(const dyn_array<std::int32_t>& free_list, std::int64_t size) const {
    if (!std::is_constant_evaluated() && segment_address_tap) return best_in_address(free_list, size);
    const block* blocks = blocks_.data_;
    std::int32_t best = -1, segment = 0;
    std::int64_t found = INT64_MAX, offset = 0;  // the best block's size, segment and offset
    // the replay's hottest loop, one statement per block (constant evaluation charges a step per
    // statement and per call; free lists hold mostly blocks of one size, so the tie is the rule)
    for (const std::int32_t *h = free_list.data_, *end = free_list.data_ + free_list.size_; h != end; ++h)
      if (blocks[*h].size >= size &&
          (blocks[*h].size < found ||
           (blocks[*h].size == found && (blocks[*h].segment < segment || (blocks[*h].segment == segment && blocks[*h].offset < offset)))))
        best = *h, found = blocks[*h].size, segment = blocks[*h].segment, offset = blocks[*h].offset;
    return best;
  }
  /// best_in with the measured segments' addresses (run time only).
  std::int32_t best_in_address(const dyn_array<std::int32_t>& free_list, std::int64_t size) const {
    std::int32_t best = -1;
    for (std::size_t k = 0; k < free_list.size_; ++k)
      if (const auto h = free_list.data_[k]; blocks_.data_[h].size >= size && (best < 0 || before_in_address(blocks_.data_[h], blocks_.data_[best])))
        best = h;
    return best;
  }

  /// get_free_block: the smallest free block >= size in the pool, ties by segment and offset.
  /// Every block of a class above the request's is larger than it: when the request's own
  /// class has none large enough, the best is the smallest of the next non-empty class.
  constexpr std::int32_t find_free(std::int64_t size, bool small) const {
    const auto best = smallest_free(size, small);
    if (best < 0) return best;
    if (conf_.expandable_segments) return best == expandable_tail_[small] ? after_expandable_tail(best, small) : best;
    const auto found = blocks_.data_[best].size;
    // do not return an oversized block for a small request, nor a much larger one for a large
    // request (max_non_split_rounding_size defaults to kLargeBuffer)
    if (size < max_split_ && found >= max_split_) return -1;
    if (size >= max_split_ && found >= size + pa::kLargeBuffer) return -1;
    return best;
  }

  /// The smallest free block >= size in the pool (BlockPool::blocks.lower_bound).
  constexpr std::int32_t smallest_free(std::int64_t size, bool small) const {
    const auto first = log2_floor(size);
    auto best = best_in(free_[small][first], size);
    const auto above = first + 1 < size_classes ? nonempty_[small] >> (first + 1) : 0;
    if (best < 0 && above != 0) best = best_in(free_[small][first + 1 + __builtin_ctzll(above)], size);
    return best;
  }

  /// get_free_block with expandable segments: the free block at the end of the mapped pages is,
  /// "for the purposes of best fit", as large as it can grow (its size plus the unmapped address
  /// space after it), so the search moves on to the next larger free block and takes the tail
  /// only when none is left (CUDACachingAllocator.cpp, get_free_block's `expandable_size`).
  constexpr std::int32_t after_expandable_tail(std::int32_t tail, bool small) const {
    const auto next = smallest_free(blocks_.data_[tail].size + 1, small);
    return next >= 0 ? next : tail;
  }

  /// should_split.
  constexpr bool should_split(const block& b, std::int64_t size) const {
    const auto remaining = b.size - size;
    if (b.small || conf_.expandable_segments) return remaining >= pa::kMinBlockSize;
    return size < max_split_ && remaining > pa::kSmallSize;
  }

  /// alloc_found_block: the front of `h` becomes the allocation, the rest a free block.
  constexpr void take(std::int32_t h, std::int64_t size) {
    if (should_split(blocks_.data_[h], size)) {
      block rest = blocks_.data_[h];
      rest.size -= size, rest.offset += size, rest.prev = h;
      rest.slot = -1;
      const auto r = add_block(rest);
      list(r);
      if (rest.next >= 0) blocks_.data_[rest.next].prev = r;
      if (conf_.expandable_segments) retail(h, r);
      blocks_.data_[h].next = r, blocks_.data_[h].size = size;
    }
    blocks_.data_[h].allocated = true;
  }

  /// Block `to` is the expandable segment's last block where `from` was.
  constexpr void retail(std::int32_t from, std::int32_t to) {
    for (auto& t : expandable_tail_) if (t == from) t = to;
  }

  /// Folds free block `b` into free block `a` (a precedes b in their segment).
  constexpr void merge(std::int32_t a, std::int32_t b) {
    if (a < 0 || b < 0 || blocks_.data_[b].allocated || blocks_.data_[a].allocated) return;
    unlist(b);
    const bool listed = blocks_.data_[a].slot >= 0;  // a free block that grows changes class
    if (listed) unlist(a);
    blocks_.data_[a].size += blocks_.data_[b].size, blocks_.data_[a].next = blocks_.data_[b].next;
    if (listed) list(a);
    if (blocks_.data_[b].next >= 0) blocks_.data_[blocks_.data_[b].next].prev = a;
    if (conf_.expandable_segments) retail(b, a);
    kill(b);
  }

  /// Room for `bytes` more reserved memory, after release_cached_blocks if a cap needs it.
  constexpr bool make_room(std::int64_t bytes) {
    if (cap_ <= 0 || reserved_ + bytes <= cap_) return true;
    release_cached();
    return reserved_ + bytes <= cap_;
  }

  /// A free, unsplit segment back to the device (release_cached_blocks' cudaFree).
  constexpr void release_segment(std::int32_t h) {
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('F', blocks_.data_[h].size, -1);
    reserved_ -= blocks_.data_[h].size, unlist(h), kill(h), ++device_calls_;
  }

  /// A free block of at least `size` from the device: a new segment, or with expandable segments
  /// more pages mapped (-1: the cap refuses it).
  constexpr std::int32_t more_memory(std::int64_t size, bool small) {
    return conf_.expandable_segments ? grow_expandable(size, small) : new_segment(size, small);
  }

  /// alloc_block: a new segment of get_allocation_size(size), one free block.
  constexpr std::int32_t new_segment(std::int64_t size, bool small) {
    const auto bytes = pa::segment_size(size);
    if (!make_room(bytes)) return -1;
    reserved_ += bytes, ++device_calls_;
    if (reserved_ > reserved_peak_) reserved_peak_ = reserved_;
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('S', bytes, -1);
    return add_block(block{bytes, 0, segments_++, -1, -1, false, small, true, -1});
  }

  /// try_allocate_expandable_block: the pool's segment maps pages (2 MiB small, 20 MiB large,
  /// ExpandableSegment's segment_size) past its end; a free block at its end is extended.
  constexpr std::int32_t grow_expandable(std::int64_t size, bool small) {
    auto& tail = expandable_tail_[small ? 1 : 0];
    const auto page = small ? pa::kSmallBuffer : pa::kLargeBuffer;
    const bool tail_free = tail >= 0 && !blocks_.data_[tail].allocated;
    const auto have = tail_free ? blocks_.data_[tail].size : 0;
    const auto pages = (size - have + page - 1) / page * page;
    if (!make_room(pages)) return -1;
    reserved_ += pages, ++device_calls_;
    if (reserved_ > reserved_peak_) reserved_peak_ = reserved_;
    if (tail_free) { blocks_.data_[tail].size += pages; return tail; }
    const auto offset = tail >= 0 ? blocks_.data_[tail].offset + blocks_.data_[tail].size : 0;
    const auto h = add_block(block{pages, offset, small ? 1 : 0, tail, -1, false, small, true, -1});
    if (tail >= 0) blocks_.data_[tail].next = h;
    tail = h;
    return h;
  }
};

}  // namespace detail
}  // namespace gpubudget
