// gpubudget/probe/caching_allocator_model.hpp — constexpr model of PyTorch's CUDA caching
// allocator rounding: what one tensor request really costs in device memory.
//
// Pure header (no CUDA). Source: PyTorch c10/cuda/CUDACachingAllocator.cpp, functions
// round_size(), get_allocation_size(), get_pool(), should_split() — identical in 1.13 (the
// version this project measures against) and 2.x (2.x moved some constants into
// c10/core/CachingAllocator.h). Not modelled: PYTORCH_CUDA_ALLOC_CONF options
// (roundup_power2_divisions, max_split_size_mb, expandable_segments), reuse of cached blocks.
#pragma once
#include <cstdint>

namespace gpubudget::probe::pytorch_allocator {

// Constants copied from c10/cuda/CUDACachingAllocator.cpp (PyTorch 1.13 and 2.x).
inline constexpr std::int64_t kMinBlockSize = 512;        // all sizes are rounded to at least 512 bytes
inline constexpr std::int64_t kSmallSize = 1048576;       // largest "small" allocation is 1 MiB
inline constexpr std::int64_t kSmallBuffer = 2097152;     // "small" allocations are packed in 2 MiB blocks
inline constexpr std::int64_t kLargeBuffer = 20971520;    // "large" allocations may be packed in 20 MiB blocks
inline constexpr std::int64_t kMinLargeAlloc = 10485760;  // allocations between 1 and 10 MiB may use kLargeBuffer
inline constexpr std::int64_t kRoundLarge = 2097152;      // round up large allocations to 2 MiB

enum class pool : std::uint8_t { none, small, large };

/// round_size(): the block size a request occupies (512-byte granularity, minimum 512).
/// A zero-byte request allocates nothing (PyTorch returns a null DataPtr for size 0).
constexpr std::int64_t round_size(std::int64_t bytes) {
  if (bytes <= 0) return 0;
  if (bytes < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

/// get_pool(): blocks of at most 1 MiB live in the small pool.
constexpr pool pool_for(std::int64_t block) {
  if (block <= 0) return pool::none;
  return block <= kSmallSize ? pool::small : pool::large;
}

/// get_allocation_size(): the segment cudaMalloc'd when no cached block fits. Applied to the
/// rounded size; note the strict `<` on kMinLargeAlloc — a 10 MiB block gets a 10 MiB segment.
constexpr std::int64_t segment_size(std::int64_t block) {
  if (block <= 0) return 0;
  if (block <= kSmallSize) return kSmallBuffer;
  if (block < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((block + kRoundLarge - 1) / kRoundLarge);
}

/// should_split() (default config): a small-pool block is split off its segment when at least
/// 512 B remain; a large-pool block only when more than 1 MiB remains, else it takes it all.
constexpr bool splits(std::int64_t block, std::int64_t segment) {
  const std::int64_t remaining = segment - block;
  return pool_for(block) == pool::small ? remaining >= kMinBlockSize : remaining > kSmallSize;
}

/// What one request costs when it is served from a fresh segment.
struct rounding {
  std::int64_t requested = 0;
  std::int64_t block = 0;    // bytes the tensor's block occupies (torch.cuda.memory_allocated)
  std::int64_t segment = 0;  // bytes cudaMalloc'd for it (torch.cuda.memory_reserved grows by this)
  std::int64_t held = 0;     // bytes unusable by other requests while it lives
  pool kind = pool::none;
  friend constexpr bool operator==(const rounding&, const rounding&) = default;
};

constexpr rounding model(std::int64_t requested) {
  rounding r;
  r.requested = requested;
  r.block = round_size(requested);
  r.kind = pool_for(r.block);
  r.segment = segment_size(r.block);
  r.held = (r.block == 0 || splits(r.block, r.segment)) ? r.block : r.segment;
  return r;
}

}  // namespace gpubudget::probe::pytorch_allocator
