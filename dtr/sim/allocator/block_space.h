#pragma once
/// Address-ordered blocks inside regions (a heap, or an allocator's
/// segments), with the free ones indexed by size for a best-fit search.
/// A freed block merges with free neighbours of its own region only: two
/// regions never coalesce, even when their addresses touch.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace dtr::sim {

struct Block {
  std::int64_t addr = 0;
  std::int64_t size = 0;
  std::uint32_t region = 0;
  bool free = true;
};

class BlockSpace {
 public:
  /// A new region [addr, addr + size), one free block; returns its id.
  std::uint32_t add_region(std::int64_t addr, std::int64_t size);
  /// Grows `region` at its end by `extra` bytes (free, merged with a free
  /// last block). The addresses after it must be unused.
  void grow_region(std::uint32_t region, std::int64_t extra);
  /// Drops `region`, which must be one free block.
  void remove_region(std::uint32_t region);
  /// Whether `region` is one free block (nothing in it is live).
  bool region_empty(std::uint32_t region) const;
  std::int64_t region_end(std::uint32_t region) const;
  /// The live regions' ids.
  std::vector<std::uint32_t> regions() const;

  /// The smallest free block of at least `bytes`, lowest address first.
  std::optional<Block> best_fit(std::int64_t bytes) const;
  /// The last block of `region` (by address).
  Block last_block(std::uint32_t region) const;
  /// Marks `bytes` at the start of free block `addr` live; the rest stays
  /// a free block if `split`, else goes with it. Returns the live size.
  std::int64_t take(std::int64_t addr, std::int64_t bytes, bool split);
  /// Frees the live block at `addr`, merged with its free neighbours.
  void release(std::int64_t addr);

  /// Throws dtr::InternalError unless: blocks tile each region without
  /// overlap or gaps, no two adjacent free blocks share a region, and the
  /// size index holds exactly the free blocks.
  void check_invariants() const;
  std::int64_t live_bytes() const { return live_bytes_; }
  const std::map<std::int64_t, Block>& blocks() const { return blocks_; }

 private:
  struct Region {
    std::int64_t addr = 0;
    std::int64_t size = 0;
    bool alive = false;
  };
  void insert_free(const Block& b);
  void erase_free(const Block& b);
  void merge_with_next(std::map<std::int64_t, Block>::iterator it);

  std::map<std::int64_t, Block> blocks_;                  // by address
  std::set<std::pair<std::int64_t, std::int64_t>> free_;  // (size, addr)
  std::vector<Region> regions_;
  std::int64_t live_bytes_ = 0;
};

}  // namespace dtr::sim
