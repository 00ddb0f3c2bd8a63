#include "dtr/sim/allocator/block_space.h"

#include <iterator>

#include "dtr/core/error.h"

namespace dtr::sim {

void BlockSpace::insert_free(const Block& b) {
  free_.emplace(b.size, b.addr);
}
void BlockSpace::erase_free(const Block& b) {
  free_.erase({b.size, b.addr});
}

std::uint32_t BlockSpace::add_region(std::int64_t addr, std::int64_t size) {
  DTR_ASSERT(size > 0, "empty region");
  const auto id = static_cast<std::uint32_t>(regions_.size());
  regions_.push_back({addr, size, true});
  const Block b{addr, size, id, true};
  blocks_.emplace(addr, b);
  insert_free(b);
  return id;
}

void BlockSpace::grow_region(std::uint32_t region, std::int64_t extra) {
  DTR_ASSERT(extra > 0, "growing a region by ", extra);
  Region& r = regions_[region];
  const Block last = last_block(region);
  if (last.free) {
    erase_free(last);
    Block& b = blocks_.at(last.addr);
    b.size += extra;
    insert_free(b);
  } else {
    const Block b{r.addr + r.size, extra, region, true};
    blocks_.emplace(b.addr, b);
    insert_free(b);
  }
  r.size += extra;
}

void BlockSpace::remove_region(std::uint32_t region) {
  DTR_ASSERT(region_empty(region), "removing region ", region, " in use");
  Region& r = regions_[region];
  erase_free(blocks_.at(r.addr));
  blocks_.erase(r.addr);
  r.alive = false;
}

bool BlockSpace::region_empty(std::uint32_t region) const {
  const Region& r = regions_[region];
  const Block& first = blocks_.at(r.addr);
  return r.alive && first.free && first.size == r.size;
}

std::int64_t BlockSpace::region_end(std::uint32_t region) const {
  return regions_[region].addr + regions_[region].size;
}

std::vector<std::uint32_t> BlockSpace::regions() const {
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < regions_.size(); ++i) {
    if (regions_[i].alive) ids.push_back(i);
  }
  return ids;
}

std::optional<Block> BlockSpace::best_fit(std::int64_t bytes) const {
  auto it = free_.lower_bound({bytes, INT64_MIN});
  if (it == free_.end()) return std::nullopt;
  return blocks_.at(it->second);
}

Block BlockSpace::last_block(std::uint32_t region) const {
  auto it = blocks_.lower_bound(region_end(region));
  DTR_ASSERT(it != blocks_.begin(), "region ", region, " has no blocks");
  return std::prev(it)->second;
}

std::int64_t BlockSpace::take(std::int64_t addr, std::int64_t bytes,
                              bool split) {
  Block& b = blocks_.at(addr);
  DTR_ASSERT(b.free && b.size >= bytes && bytes > 0, "taking ", bytes,
             " bytes of block ", addr);
  erase_free(b);
  if (split && b.size > bytes) {
    const Block rest{addr + bytes, b.size - bytes, b.region, true};
    blocks_.emplace(rest.addr, rest);
    insert_free(rest);
    b.size = bytes;
  }
  b.free = false;
  live_bytes_ += b.size;
  return b.size;
}

// Merges the block at `it` with the next one if both are free and in the
// same region.
void BlockSpace::merge_with_next(std::map<std::int64_t, Block>::iterator it) {
  auto next = std::next(it);
  if (!it->second.free || next == blocks_.end() || !next->second.free ||
      next->second.region != it->second.region ||
      next->second.addr != it->second.addr + it->second.size) {
    return;
  }
  erase_free(it->second);
  erase_free(next->second);
  it->second.size += next->second.size;
  blocks_.erase(next);
  insert_free(it->second);
}

void BlockSpace::release(std::int64_t addr) {
  auto it = blocks_.find(addr);
  DTR_ASSERT(it != blocks_.end() && !it->second.free,
             "releasing a block that is not live at ", addr);
  it->second.free = true;
  live_bytes_ -= it->second.size;
  insert_free(it->second);
  merge_with_next(it);
  if (it != blocks_.begin()) merge_with_next(std::prev(it));
}

void BlockSpace::check_invariants() const {
  std::vector<std::int64_t> covered(regions_.size(), 0);
  std::size_t free_count = 0;
  std::int64_t live = 0;
  const Block* prev = nullptr;
  for (const auto& [addr, b] : blocks_) {
    DTR_ASSERT(addr == b.addr && b.size > 0, "bad block at ", addr);
    const Region& r = regions_.at(b.region);
    DTR_ASSERT(
        r.alive && b.addr >= r.addr && b.addr + b.size <= r.addr + r.size,
        "block at ", addr, " lies outside its region ", b.region);
    if (prev != nullptr) {
      DTR_ASSERT(prev->addr + prev->size <= b.addr, "blocks at ", prev->addr,
                 " and ", b.addr, " overlap");
      DTR_ASSERT(!(prev->free && b.free && prev->region == b.region),
                 "free blocks at ", prev->addr, " and ", b.addr,
                 " are not coalesced");
    }
    covered[b.region] += b.size;
    if (b.free) {
      ++free_count;
      DTR_ASSERT(free_.count({b.size, b.addr}) == 1, "free block at ", addr,
                 " missing from the size index");
    } else {
      live += b.size;
    }
    prev = &b;
  }
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    if (regions_[i].alive) {
      DTR_ASSERT(covered[i] == regions_[i].size, "region ", i,
                 " is not tiled by its blocks");
    }
  }
  DTR_ASSERT(free_count == free_.size(), "stale entries in the size index");
  DTR_ASSERT(live == live_bytes_, "live bytes ", live_bytes_, " counted ",
             live);
}

}  // namespace dtr::sim
