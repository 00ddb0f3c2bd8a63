#include "dtr/sim/allocator/caching.h"

#include "dtr/core/error.h"

namespace dtr::sim {

std::int64_t CachingModel::round_size(std::int64_t bytes) {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

std::int64_t CachingModel::segment_size(std::int64_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

BlockSpace& CachingModel::pool_of(std::int64_t rounded) {
  return rounded <= kSmallSize ? small_ : large_;
}

void CachingModel::release_cached_segments() {
  for (BlockSpace* pool : {&small_, &large_}) {
    for (std::uint32_t r : pool->regions()) {
      if (!pool->region_empty(r)) continue;
      const Block b = pool->last_block(r);
      reserved_ -= b.size;
      pool->remove_region(r);
      ++released_;
    }
  }
}

AllocatorModel::Spot CachingModel::place(std::int64_t bytes) {
  const std::int64_t size = round_size(bytes);
  BlockSpace& pool = pool_of(size);
  std::optional<Block> block = pool.best_fit(size);
  bool within = true;
  if (!block) {
    const std::int64_t segment = segment_size(size);
    if (segment > capacity_ - reserved_) release_cached_segments();
    within = segment <= capacity_ - reserved_;
    pool.add_region(next_addr_, segment);
    next_addr_ += segment;
    reserved_ += segment;
    block = pool.best_fit(size);
  }
  const std::int64_t remaining = block->size - size;
  const bool split =
      &pool == &small_ ? remaining >= kMinBlockSize : remaining > kSmallSize;
  pool.take(block->addr, size, split);
  return {block->addr, within};
}

void CachingModel::release(std::int64_t addr) {
  BlockSpace& pool = small_.blocks().count(addr) ? small_ : large_;
  pool.release(addr);
}

void CachingModel::check_invariants() const {
  small_.check_invariants();
  large_.check_invariants();
  std::int64_t segments = 0;
  for (const BlockSpace* pool : {&small_, &large_}) {
    for (const auto& [addr, b] : pool->blocks()) segments += b.size;
  }
  DTR_ASSERT(segments == reserved_, "segments hold ", segments,
             " bytes, reserved ", reserved_);
}

}  // namespace dtr::sim
