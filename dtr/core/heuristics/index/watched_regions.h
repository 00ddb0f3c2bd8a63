#pragma once
/// The regions the score index and the pruned scan read ("dtr", "msps"):
/// cached per storage, exact or a lower bound, and kept valid by watchers
/// that report which caches an event changed.
///
/// Note [Region watchers]
/// The score index (indexed_heuristic.h) must learn which caches an event
/// invalidates, to mark those storages dirty. So each computed cache
/// registers its storage, with the cache's generation, as a watcher of every
/// member; an event at u reaches the watchers of u whose registration is
/// still current and reports them (stale()). A recomputed cache registers
/// again. Stale registrations (a cache recomputed since) are skipped, and
/// pruned when a list doubles, so the lists stay proportional to the live
/// caches.
///
/// Note [Regions that only grow]
/// A region only grows when a member of its frontier is evicted or an op
/// adds edges at a member: its interior stays reachable through storages
/// still evicted. Its cache is then no longer exact, but its sum is still a
/// lower bound, so the watchers demote it to a bound, keeping its
/// registrations. A rematerialized, banished or recycled member
/// (Change::kShrinks) lowers it to the sums found before that member (Note
/// [Truncated regions]), or, at a frontier member, demotes it. A stopped
/// DFS (Note [Bounded regions]) leaves such a bound too. A bound counts
/// only interior members, and only a change to one of those can lower the
/// region below it, so a stopped DFS registers at the interior it saw, not
/// at its frontier (on nn.GRU's trace that halves the registrations). The
/// member just evicted is no longer watched (its list is emptied), which is
/// sound since the bound never counted it; an evicted member that gains
/// edges keeps its watchers, since a bound may count it. The pruned scan skips
/// a candidate without a DFS while its bound still loses.
#include <cstdint>
#include <vector>

#include "dtr/core/heuristics/index/region_walk.h"

namespace dtr {

class WatchedRegions {
 public:
  WatchedRegions(RegionWalk& walk, std::uint64_t& accesses)
      : walk_(walk), accesses_(accesses) {}
  void on_storage_created(StorageId s);
  /// What happened to s (Note [Regions that only grow]): it was evicted, or
  /// an op read it while evicted (regions through it can only grow), or it
  /// was rematerialized, banished or recycled (they can shrink).
  enum class Change { kEvicted, kEdgesAdded, kShrinks };
  void on_changed(StorageId s, Change change);
  /// New edges at resident s: only its own regions change.
  void on_edges_added_resident(StorageId s) {
    if (s < cache_.size()) invalidate(s);
  }
  void on_recycled(StorageId s);

  struct Sums {
    std::int64_t down_compute_ns = 0;
    std::int64_t up_compute_ns = 0;
  };
  /// s's exact sums (s resident), recomputed if no cache is exact.
  Sums exact_sums(const Graph& g, StorageId s);
  /// s's exact sums if `own_ns` plus them stays within `limit`; else false,
  /// keeping what the DFS saw as a bound if it beats the one known. An
  /// exact cache is returned as is (the caller compares it with the limit).
  bool within(const Graph& g, StorageId s, std::int64_t own_ns,
              const RegionLimit& limit, Sums& out);
  /// Whether s's cache is exact.
  bool exact(StorageId s) const { return cache_[s].valid && !cache_[s].bound; }
  /// Whether s's cache is exact or a valid bound.
  bool known(StorageId s) const { return cache_[s].valid; }
  /// A lower bound on the sum of s's regions (0 if nothing is known).
  std::int64_t lower_bound(StorageId s) const;
  /// Storages whose caches events changed since the last call (with
  /// repeats and storages that are not pooled); the caller empties it.
  std::vector<StorageId>& stale() { return stale_; }

 private:
  struct Cache {
    Region region;                 ///< its sums are a lower bound if `bound`
    std::uint32_t generation = 0;  ///< registrations (watcher entries)
    bool valid = false;            ///< exact, or a valid bound if `bound`
    bool bound = false;            ///< the sums are only a lower bound
  };
  enum class Place : std::uint8_t { kUp, kDown, kFrontier };
  struct Watcher {
    StorageId storage;
    std::uint32_t generation;
    /// Note [Truncated regions]: the member's direction's sum before it
    /// was found (clamped to the field: lower is still a bound).
    std::uint64_t sum_before : 62;
    std::uint64_t place : 2;  ///< a Place
  };
  void invalidate(StorageId s);  ///< drops the cache; reports s stale
  void demote(StorageId s);      ///< exact to bound; reports s stale
  /// Note [Truncated regions]: w's member left the region.
  void truncate(const Watcher& w);
  /// Registers the cache's members right after the walk that found them;
  /// `bound`: the walk stopped.
  void register_members(StorageId s, bool bound);
  void watch(StorageId member, const Watcher& w);

  std::vector<Cache> cache_;
  std::vector<std::vector<Watcher>> watchers_;  // per member storage
  std::vector<std::uint32_t> prune_at_;  // per member: list size to prune at
  std::vector<StorageId> stale_;
  Region scratch_;  // a walk's result before it replaces a cache
  RegionWalk& walk_;
  std::uint64_t& accesses_;
};

}  // namespace dtr
