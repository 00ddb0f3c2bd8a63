#pragma once
/// Exact evicted neighbourhoods e*(S) (paper App. C.2), computed lazily: the
/// machinery shared by the "dtr" (dtr.h) and "msps" (msps.h) heuristics.
///
/// Note [Lazy evicted regions]
/// e*(S) is the set of evicted storages reachable from S through evicted
/// storages, going to children (`down`) or to parents (`up`); the two
/// directions are never mixed. The reference simulator maintains both
/// regions of every storage eagerly, on every eviction and every
/// rematerialization, which dominates its running time even when no
/// heuristic eviction ever happens. We compute a storage's regions only when
/// the heuristic scores it, by a DFS through evicted storages, and cache the
/// cost sums together with the set of storages the DFS touched (the
/// interior and the resident frontier). Every eviction, rematerialization or
/// banishment appends the storage to an event log; a cache is still exact
/// iff no event since it was computed touched one of its members, since a
/// region can only change when an interior storage becomes resident or a
/// frontier storage is evicted. New operators add edges, so they invalidate
/// the caches of the storages they read and write.
///
/// Note [Region watchers]
/// The scan checks a cache against the event log (above), which costs one
/// step per event since the cache was computed. The score index
/// (indexed_heuristic.h) must instead learn which caches an event
/// invalidates, to mark those storages dirty. So each computed cache
/// registers its storage, with the cache's generation, as a watcher of every
/// member; an event at u invalidates the watchers of u whose registration is
/// still current and reports them (take_stale), and empties u's list. A
/// recomputed cache registers again. Stale registrations (a cache
/// recomputed since) are skipped, and pruned when a list doubles, so the
/// lists stay proportional to the live caches. Both ways decide validity
/// from the same events; the checking choice mode compares their victims.
#include <vector>

#include "dtr/core/heuristic.h"

namespace dtr {

class EvictedRegions {
 public:
  /// `with_down`: also compute the children direction (MSPS needs only up).
  /// Each storage read while walking or checking a region adds one to
  /// `accesses`, the owning heuristic's metadata access counter.
  EvictedRegions(bool with_down, std::uint64_t& accesses)
      : with_down_(with_down), accesses_(accesses) {}

  void on_storage_created(const Graph& g, StorageId s);
  void on_op_recorded(const Graph& g, OpId op);
  void on_changed(StorageId s);   ///< evicted, rematerialized or banished
  void on_recycled(StorageId s);  ///< its id will name a new storage

  /// Sum of c0 over e*(s) in each direction (s resident), checked against
  /// the event log (the scan's way).
  std::int64_t down_compute(const Graph& g, StorageId s) {
    return refresh(g, s).down_compute_ns;
  }
  std::int64_t up_compute(const Graph& g, StorageId s) {
    return refresh(g, s).up_compute_ns;
  }
  struct Sums {
    std::int64_t down_compute_ns = 0;
    std::int64_t up_compute_ns = 0;
  };
  /// The same sums, trusting the watchers (Note [Region watchers]): a
  /// cache no event invalidated is returned without reading the log.
  Sums watched(const Graph& g, StorageId s);
  /// Storages whose caches events invalidated since the last call (with
  /// repeats and storages that are not pooled); the list is emptied.
  std::vector<StorageId>& stale() { return stale_; }

 private:
  struct Cache {
    /// Interior and frontier, without repeats; sorted only when the scan's
    /// check needs it (`sorted`): the watchers do not, and sorting every
    /// recomputed region was a third of an indexed run on a long chain.
    std::vector<StorageId> members;
    bool sorted = false;
    std::int64_t down_compute_ns = 0;
    std::int64_t up_compute_ns = 0;
    std::size_t stamp = 0;         ///< events_.size() when computed
    std::uint32_t generation = 0;  ///< recomputations (watcher entries)
    bool valid = false;            ///< per the event log
    bool watched_valid = false;    ///< per the watchers
  };
  struct Watcher {
    StorageId storage;
    std::uint32_t generation;
  };
  const Cache& refresh(const Graph& g, StorageId s);
  void recompute(const Graph& g, StorageId s);
  void explore(const Graph& g, StorageId base, bool upward, Cache& c);
  void invalidate(StorageId s);  ///< both validities; reports s stale
  void watch(StorageId member, StorageId s, std::uint32_t generation);

  bool with_down_;
  std::vector<Cache> cache_;
  std::vector<StorageId> events_;
  std::vector<std::vector<Watcher>> watchers_;  // per member storage
  std::vector<std::uint32_t> prune_at_;  // per member: list size to prune at
  std::vector<StorageId> stale_;
  std::vector<std::uint32_t> interior_mark_, member_mark_;
  std::uint32_t epoch_ = 0;           // member marks
  std::uint32_t interior_epoch_ = 0;  // interior marks, per direction
  std::vector<StorageId> stack_;
  std::uint64_t& accesses_;
};

}  // namespace dtr
