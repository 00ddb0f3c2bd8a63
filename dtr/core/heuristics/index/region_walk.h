#pragma once
/// Exact evicted neighbourhoods e*(S) (paper App. C.2): the DFS that finds
/// one storage's regions, shared by the caches of the "dtr" and "msps"
/// heuristics (logged_regions.h for the scan, watched_regions.h for the
/// index and the pruned scan).
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
/// interior and the resident frontier): a region can only change when an
/// interior storage becomes resident, a frontier storage is evicted, or an
/// op adds edges at a member.
///
/// Note [Bounded regions]
/// A scan needs a candidate's exact region only if the candidate can win.
/// A DFS's running sum only grows, so once c0 plus the running sum scores
/// above the best exact score seen so far, the candidate has lost and the
/// DFS can stop (a RegionLimit). What it saw is part of the region, so its
/// sum is a lower bound (watched_regions.h keeps it). On nn.GRU's trace
/// the victims' regions are small while the losers' span the recurrence,
/// so most DFSs stop after a few storages (region_heuristic.h).
#include <cstdint>
#include <limits>
#include <vector>

#include "dtr/core/graph.h"

namespace dtr {

/// One storage's regions: both directions' cost sums and their members
/// without repeats: first the interior (evicted storages the sums count) in
/// the order the DFS found them, the upward walk's first, then the frontier
/// (resident or not yet computed storages next to it).
///
/// Note [Truncated regions]
/// A DFS finds each storage from one found before it, so the storages found
/// before interior member i stay reachable without it: when i alone becomes
/// resident, its direction's sum before it was found (RegionWalk::
/// sums_before) is still a lower bound on that direction's region. A storage
/// in both directions' regions is listed once, in the upward part, so when
/// some is (`shared`), losing an upward member leaves no bound on the
/// downward region.
struct Region {
  std::vector<StorageId> members;
  std::uint32_t interior_count = 0;  ///< members[0, interior_count)
  std::uint32_t up_count = 0;        ///< members[0, up_count) are found upward
  bool shared = false;  ///< an interior storage is in both directions
  std::int64_t down_compute_ns = 0;
  std::int64_t up_compute_ns = 0;
};

/// Note [Bounded regions]: where a DFS stops. Totals (c0 plus the regions'
/// sums) up to `safe_ns` are within the limit; above it, over() decides.
/// A DFS also stops after `max_visits` storage reads.
class RegionLimit {
 public:
  virtual bool over(std::int64_t total_ns) const = 0;
  std::int64_t safe_ns = 0;
  std::uint64_t max_visits = std::numeric_limits<std::uint64_t>::max();

 protected:
  ~RegionLimit() = default;
};

class RegionWalk {
 public:
  /// `with_down`: also walk the children direction (MSPS needs only up).
  /// Each storage read adds one to `accesses`, the owning heuristic's
  /// metadata access counter.
  RegionWalk(bool with_down, std::uint64_t& accesses)
      : with_down_(with_down), accesses_(accesses) {}
  void on_storage_created(StorageId s);
  void on_recycled(StorageId s);
  /// Fills `r` with s's regions. With a limit, stops and returns false (r
  /// holds part of the regions) once `own_ns` plus the sums is over it.
  bool walk(const Graph& g, StorageId s, std::int64_t own_ns,
            const RegionLimit* limit, Region& r);
  /// Per interior member of the last walk's region, its direction's sum
  /// before it was found (Note [Truncated regions]).
  const std::vector<std::int64_t>& sums_before() const { return sum_before_; }

 private:
  bool explore(const Graph& g, StorageId base, bool upward, Region& r,
               std::int64_t& total, std::uint64_t& visits,
               const RegionLimit* limit);

  bool with_down_;
  std::vector<std::uint32_t> interior_mark_, member_mark_;  // per storage
  std::uint32_t epoch_ = 0;                                 // member marks
  std::uint32_t interior_epoch_ = 0;  // interior marks, per direction
  std::vector<StorageId> stack_;
  std::vector<StorageId> frontier_;  // appended to the members at the end
  std::vector<std::int64_t> sum_before_;
  std::uint64_t& accesses_;
};

}  // namespace dtr
