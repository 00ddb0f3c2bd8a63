#pragma once
/// The regions the reference scan reads ("dtr", "msps" with
/// ChoiceMode::kScan or kCheck): cached per storage and checked against a
/// log of events, independently of the index's caches (watched_regions.h),
/// so that kCheck compares two computations that share no state.
///
/// Note [Logged regions]
/// Every eviction, rematerialization, banishment or edge added at an
/// evicted storage appends the storage to an event log; a cache is still
/// exact iff no event since it was computed touched one of its members
/// (Note [Lazy evicted regions]). Checking costs one step per event since
/// the cache was computed. The log starts at the first lookup, so a run
/// that never scans pays nothing for it.
#include <cstdint>
#include <vector>

#include "dtr/core/heuristics/index/region_walk.h"

namespace dtr {

class LoggedRegions {
 public:
  LoggedRegions(RegionWalk& walk, std::uint64_t& accesses)
      : walk_(walk), accesses_(accesses) {}
  /// New edges at s: its own cache is stale, and, if s is evicted, every
  /// cache through it (`logged`).
  void on_edges_added(StorageId s, bool logged);
  /// s was evicted, rematerialized, banished or recycled.
  void on_changed(StorageId s);
  void on_recycled(StorageId s);

  /// s's exact regions (s resident).
  const Region& regions(const Graph& g, StorageId s);

 private:
  struct Cache {
    Region region;
    bool sorted = false;    ///< members sorted (for the log check)
    std::size_t stamp = 0;  ///< events_.size() when computed
    bool valid = false;     ///< no event invalidated it yet
  };
  bool active_ = false;  // a lookup happened: log events
  std::vector<Cache> cache_;
  std::vector<StorageId> events_;
  RegionWalk& walk_;
  std::uint64_t& accesses_;
};

}  // namespace dtr
