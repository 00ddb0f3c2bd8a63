#pragma once
/// A model of PyTorch's CUDA caching allocator (c10/cuda/
/// CUDACachingAllocator.cpp, default configuration, one stream):
/// - a request is rounded up to a multiple of 512 B;
/// - up to 1 MiB it is served from the small pool, whose segments are
///   2 MiB; above, from the large pool: 20 MiB segments for requests under
///   10 MiB, else a segment of the request rounded up to 2 MiB;
/// - the smallest free block of the pool that fits is used and split if the
///   remainder is at least 512 B (small pool) or over 1 MiB (large pool);
/// - freed blocks merge with free neighbours of their own segment only;
/// - free segments stay cached; only when a new segment would pass the
///   capacity are all fully free segments released (as PyTorch does before
///   it reports out of memory), then the segment is taken anyway.
#include "dtr/sim/allocator/allocator_model.h"
#include "dtr/sim/allocator/block_space.h"

namespace dtr::sim {

class CachingModel : public AllocatorModel {
 public:
  static constexpr std::int64_t kMinBlockSize = 512;
  static constexpr std::int64_t kSmallSize = 1 << 20;
  static constexpr std::int64_t kSmallBuffer = 2 << 20;
  static constexpr std::int64_t kLargeBuffer = 20 << 20;
  static constexpr std::int64_t kMinLargeAlloc = 10 << 20;
  static constexpr std::int64_t kRoundLarge = 2 << 20;

  /// The block size of a request, and the segment it would need.
  static std::int64_t round_size(std::int64_t bytes);
  static std::int64_t segment_size(std::int64_t rounded);

  explicit CachingModel(std::int64_t capacity) : capacity_(capacity) {}
  Spot place(std::int64_t bytes) override;
  void release(std::int64_t addr) override;
  std::int64_t reserved_bytes() const override { return reserved_; }
  void check_invariants() const override;
  /// Bytes of the live blocks, rounding and unsplit rests included
  /// (PyTorch's memory_allocated()).
  std::int64_t allocated_bytes() const {
    return small_.live_bytes() + large_.live_bytes();
  }
  /// Cached segments given back so far, under capacity pressure.
  std::int64_t segments_released() const { return released_; }

 private:
  BlockSpace& pool_of(std::int64_t rounded);
  void release_cached_segments();

  std::int64_t capacity_;
  BlockSpace small_;
  BlockSpace large_;
  std::int64_t reserved_ = 0;
  std::int64_t next_addr_ = 0;  // segments never share an address
  std::int64_t released_ = 0;
};

}  // namespace dtr::sim
