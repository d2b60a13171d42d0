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
#include <gpubudget/detail/dyn_array.hpp>
#include <gpubudget/probe/caching_allocator_model.hpp>

namespace gpubudget {
namespace detail {

namespace pa = probe::pytorch_allocator;

/// A debugging tap, run time only (never read in a constant evaluation): when set, every replay's
/// start ('R': its cap), request ('+': bytes asked, the block's handle), free ('-': handle) and new
/// segment ('S': bytes) and released segment ('F': bytes, under a cap) is reported. The CLI sets it for GPUBUDGET_ALLOCATOR_EVENTS=FILE, to set the replay's
/// requests beside a measured trace's (benchmarks/gpu/compare_allocator_events.py).
inline void (*allocator_event_tap)(char what, std::int64_t bytes, std::int32_t handle) = nullptr;

/// Largest power of two <= v (v > 0).
constexpr std::int64_t power2_floor(std::int64_t v) {
  std::int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}
constexpr std::int32_t log2_floor(std::int64_t v) {
  std::int32_t l = 0;
  while (v > 1) v /= 2, ++l;
  return l;
}

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

/// The allocator's state: segments cut into blocks, each block free or allocated.
class caching_allocator {
 public:
  constexpr explicit caching_allocator(const allocator_settings& a = {}, std::int64_t cap = 0) : conf_(a), cap_(cap) {
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('R', cap, -1);  // a new replay
  }

  /// Allocates `bytes` (a tensor's request); returns the block's handle, -1 on OOM (capped only).
  constexpr std::int32_t malloc(std::int64_t bytes) {
    if (bytes <= 0) return -1;
    const auto size = round_request(conf_, bytes);
    const bool small = size <= pa::kSmallSize;
    auto b = find_free(size, small);
    if (b < 0) b = conf_.expandable_segments ? grow_expandable(size, small) : new_segment(size, small);
    if (b < 0) { oom_ = true; return -1; }
    unlist(b);
    take(b, size);
    allocated_ += blocks_[static_cast<std::size_t>(b)].size;
    if (allocated_ > allocated_peak_) allocated_peak_ = allocated_;
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('+', bytes, b);
    return b;
  }

  /// A request the caller can do without (cuDNN's try_configs catches the OOM and tries its next
  /// engine): -1 when it does not fit, and no OOM recorded. The cache is released all the same.
  constexpr std::int32_t try_malloc(std::int64_t bytes) {
    const bool was = oom_;
    const auto h = malloc(bytes);
    oom_ = was;
    return h;
  }

  /// Frees a block malloc returned (free_block: merged with its free neighbours).
  constexpr void free(std::int32_t h) {
    if (h < 0) return;
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('-', 0, h);
    auto& b = at(h);
    b.allocated = false;
    allocated_ -= b.size;
    merge(h, b.next);
    if (b.prev >= 0 && !at(b.prev).allocated) merge(b.prev, h);
    else list(h);
  }

  constexpr std::int64_t reserved() const { return reserved_; }
  constexpr std::int64_t reserved_peak() const { return reserved_peak_; }
  constexpr std::int64_t allocated() const { return allocated_; }
  constexpr std::int64_t allocated_peak() const { return allocated_peak_; }
  /// torch.cuda.reset_peak_memory_stats() for the allocated bytes.
  constexpr void reset_allocated_peak() { allocated_peak_ = allocated_; }
  constexpr bool out_of_memory() const { return oom_; }

 private:
  struct block {
    std::int64_t size = 0, offset = 0;
    std::int32_t segment = 0, prev = -1, next = -1;
    bool allocated = false, small = false, alive = true;
    std::int32_t slot = -1;  ///< index in its pool's free list (-1: not free)
  };
  allocator_settings conf_;
  std::int64_t cap_ = 0;  ///< allocator cap in bytes (0: none)
  dyn_array<block> blocks_{};
  dyn_array<std::int32_t> dead_{};  ///< slots of merged or released blocks, reused first
  /// The cached free blocks of the large (0) and small (1) pool: what a request searches
  /// (PyTorch's BlockPool::blocks), so that a search costs the cache, not every block.
  std::array<dyn_array<std::int32_t>, 2> free_{};
  std::int64_t reserved_ = 0, reserved_peak_ = 0, allocated_ = 0, allocated_peak_ = 0;
  std::int32_t segments_ = 0;
  std::array<std::int32_t, 2> expandable_tail_{-1, -1};  ///< last block of each pool's expandable segment
  bool oom_ = false;

  constexpr block& at(std::int32_t h) { return blocks_[static_cast<std::size_t>(h)]; }
  constexpr std::int64_t max_split() const { return conf_.max_split_size > 0 ? conf_.max_split_size : INT64_MAX; }

  /// BlockComparatorSize: by size, then (for address) segment and offset.
  static constexpr bool before(const block& a, const block& b) {
    if (a.size != b.size) return a.size < b.size;
    return a.segment != b.segment ? a.segment < b.segment : a.offset < b.offset;
  }

  /// A slot for a new block: a dead one if any (keeps the block array as small as the state).
  constexpr std::int32_t add_block(const block& b) {
    if (!dead_.empty()) {
      const auto h = dead_.back();
      dead_.pop_back();
      at(h) = b;
      return h;
    }
    blocks_.push_back(b);
    return static_cast<std::int32_t>(blocks_.size() - 1);
  }
  constexpr void kill(std::int32_t h) { at(h).alive = false, dead_.push_back(h); }
  constexpr dyn_array<std::int32_t>& pool_of(const block& b) { return free_[b.small ? 1 : 0]; }
  constexpr void list(std::int32_t h) {
    auto& pool = pool_of(at(h));
    at(h).slot = static_cast<std::int32_t>(pool.size());
    pool.push_back(h);
  }
  constexpr void unlist(std::int32_t h) {
    const auto slot = at(h).slot;
    if (slot < 0) return;
    auto& pool = pool_of(at(h));
    const auto last = pool.back();
    pool[static_cast<std::size_t>(slot)] = last, at(last).slot = slot;
    pool.pop_back();
    at(h).slot = -1;
  }

  /// get_free_block: the smallest free block >= size in the pool, ties by segment and offset.
  constexpr std::int32_t find_free(std::int64_t size, bool small) const {
    std::int32_t best = -1;
    for (const auto h : free_[small ? 1 : 0]) {
      const block& b = blocks_[static_cast<std::size_t>(h)];
      if (b.size >= size && (best < 0 || before(b, blocks_[static_cast<std::size_t>(best)]))) best = h;
    }
    if (best < 0 || conf_.expandable_segments) return best;
    const auto found = blocks_[static_cast<std::size_t>(best)].size;
    // do not return an oversized block for a small request, nor a much larger one for a large
    // request (max_non_split_rounding_size defaults to kLargeBuffer)
    if (size < max_split() && found >= max_split()) return -1;
    if (size >= max_split() && found >= size + pa::kLargeBuffer) return -1;
    return best;
  }

  /// should_split.
  constexpr bool should_split(const block& b, std::int64_t size) const {
    const auto remaining = b.size - size;
    if (b.small || conf_.expandable_segments) return remaining >= pa::kMinBlockSize;
    return size < max_split() && remaining > pa::kSmallSize;
  }

  /// alloc_found_block: the front of `h` becomes the allocation, the rest a free block.
  constexpr void take(std::int32_t h, std::int64_t size) {
    if (should_split(at(h), size)) {
      block rest = at(h);
      rest.size -= size, rest.offset += size, rest.prev = h;
      rest.slot = -1;
      const auto r = add_block(rest);
      list(r);
      if (rest.next >= 0) at(rest.next).prev = r;
      for (auto& t : expandable_tail_) if (t == h) t = r;
      at(h).next = r, at(h).size = size;
    }
    at(h).allocated = true;
  }

  /// Folds free block `b` into free block `a` (a precedes b in their segment).
  constexpr void merge(std::int32_t a, std::int32_t b) {
    if (a < 0 || b < 0 || at(b).allocated || at(a).allocated) return;
    unlist(b);
    at(a).size += at(b).size, at(a).next = at(b).next;
    if (at(b).next >= 0) at(at(b).next).prev = a;
    for (auto& t : expandable_tail_) if (t == b) t = a;
    kill(b);
  }

  /// Room for `bytes` more reserved memory, after release_cached_blocks if a cap needs it.
  constexpr bool make_room(std::int64_t bytes) {
    if (cap_ <= 0 || reserved_ + bytes <= cap_) return true;
    for (auto& pool : free_)  // free, unsplit segments go back to the device
      for (auto k = pool.size(); k-- > 0 && !conf_.expandable_segments;)
        if (const auto h = pool[k]; at(h).prev < 0 && at(h).next < 0) release_segment(h);
    return reserved_ + bytes <= cap_;
  }

  /// A free, unsplit segment back to the device (release_cached_blocks' cudaFree).
  constexpr void release_segment(std::int32_t h) {
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('F', at(h).size, -1);
    reserved_ -= at(h).size, unlist(h), kill(h);
  }

  /// alloc_block: a new segment of get_allocation_size(size), one free block.
  constexpr std::int32_t new_segment(std::int64_t size, bool small) {
    const auto bytes = pa::segment_size(size);
    if (!make_room(bytes)) return -1;
    reserved_ += bytes;
    if (reserved_ > reserved_peak_) reserved_peak_ = reserved_;
    if (!std::is_constant_evaluated() && allocator_event_tap) allocator_event_tap('S', bytes, -1);
    return add_block(block{bytes, 0, segments_++, -1, -1, false, small, true, -1});
  }

  /// try_allocate_expandable_block: the pool's segment maps pages (2 MiB small, 20 MiB large,
  /// ExpandableSegment's segment_size) past its end; a free block at its end is extended.
  constexpr std::int32_t grow_expandable(std::int64_t size, bool small) {
    auto& tail = expandable_tail_[small ? 1 : 0];
    const auto page = small ? pa::kSmallBuffer : pa::kLargeBuffer;
    const bool tail_free = tail >= 0 && !at(tail).allocated;
    const auto have = tail_free ? at(tail).size : 0;
    const auto pages = (size - have + page - 1) / page * page;
    if (!make_room(pages)) return -1;
    reserved_ += pages;
    if (reserved_ > reserved_peak_) reserved_peak_ = reserved_;
    if (tail_free) { at(tail).size += pages; return tail; }
    const auto offset = tail >= 0 ? at(tail).offset + at(tail).size : 0;
    const auto h = add_block(block{pages, offset, small ? 1 : 0, tail, -1, false, small, true, -1});
    if (tail >= 0) at(tail).next = h;
    tail = h;
    return h;
  }
};

}  // namespace detail
}  // namespace gpubudget
