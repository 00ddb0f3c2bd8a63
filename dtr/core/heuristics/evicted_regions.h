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
/// cost sums together with the sorted set of storages the DFS touched (the
/// interior and the resident frontier). Every eviction, rematerialization or
/// banishment appends the storage to an event log; a cache is still exact
/// iff no event since it was computed touched one of its members, since a
/// region can only change when an interior storage becomes resident or a
/// frontier storage is evicted. New operators add edges, so they invalidate
/// the caches of the storages they read and write.
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

  /// Sum of c0 over e*(s) in each direction (s resident).
  std::int64_t down_compute(const Graph& g, StorageId s) {
    return refresh(g, s).down_compute_ns;
  }
  std::int64_t up_compute(const Graph& g, StorageId s) {
    return refresh(g, s).up_compute_ns;
  }

 private:
  struct Cache {
    std::vector<StorageId> members;  ///< sorted: interior and frontier
    std::int64_t down_compute_ns = 0;
    std::int64_t up_compute_ns = 0;
    std::size_t stamp = 0;  ///< events_.size() when computed
    bool valid = false;
  };
  const Cache& refresh(const Graph& g, StorageId s);
  void explore(const Graph& g, StorageId base, bool upward, Cache& c);

  bool with_down_;
  std::vector<Cache> cache_;
  std::vector<StorageId> events_;
  std::vector<std::uint32_t> interior_mark_, member_mark_;
  std::uint32_t epoch_ = 0;           // member marks
  std::uint32_t interior_epoch_ = 0;  // interior marks, per direction
  std::vector<StorageId> stack_;
  std::uint64_t& accesses_;
};

/// Shared plumbing of the two heuristics that read evicted regions.
class RegionHeuristic : public Heuristic {
 public:
  explicit RegionHeuristic(bool with_down) : regions_(with_down, accesses_) {}
  void on_storage_created(const Graph& g, StorageId s) override {
    regions_.on_storage_created(g, s);
  }
  void on_op_recorded(const Graph& g, OpId op) override {
    regions_.on_op_recorded(g, op);
  }
  void on_evicted(const Graph& g, StorageId s) override {
    regions_.on_changed(s);
  }
  void on_banished(const Graph& g, StorageId s) override {
    regions_.on_changed(s);
  }
  void on_storage_recycled(const Graph& g, StorageId s) override {
    regions_.on_recycled(s);
  }
  void on_materialized(const Graph& g,
                       std::span<const StorageId> storages) override {
    for (StorageId s : storages) regions_.on_changed(s);
  }

 protected:
  EvictedRegions regions_;
};

}  // namespace dtr
