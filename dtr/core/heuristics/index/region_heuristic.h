#pragma once
/// Base of the heuristics whose cost reads exact evicted regions ("dtr",
/// "msps"; Note [Lazy evicted regions]). The reference scan reads regions
/// checked against an event log (logged_regions.h); the score index and the
/// pruned scan read regions kept by watchers (watched_regions.h), and every
/// pooled storage whose cache an event changed is marked dirty for the
/// index (Note [Dirty costs]). The two share no cache, so kCheck compares
/// independent computations.
///
/// Note [Pruned region scan]
/// Under churn the index is dropped (Note [Index or scan]) and the victim
/// is found by a scan that computes few regions: a candidate whose cache is
/// exact scores exactly; any other is bounded below by its own cost plus
/// its cache's bound (Note [Regions that only grow]), or its own cost alone.
/// Open candidates are resolved in order of their bounds, each by a DFS that
/// stops once it scores above the best exact score so far (Note [Bounded
/// regions]), and the resolution ends at the first bound above it. Every
/// candidate left open scores above the minimum, so the scan's rule (the
/// first score of 0 in pool order, else the last minimum) applied to the
/// exact scores alone picks the reference's victim; kCheck compares them on
/// every choice.
#include <span>
#include <vector>

#include "dtr/core/heuristics/index/indexed_heuristic.h"
#include "dtr/core/heuristics/index/logged_regions.h"
#include "dtr/core/heuristics/index/region_walk.h"
#include "dtr/core/heuristics/index/watched_regions.h"

namespace dtr {

class RegionHeuristic : public IndexedHeuristic {
 public:
  void on_storage_created(const Graph& g, StorageId s) override;
  void on_op_recorded(const Graph& g, OpId op) override;
  void on_evicted(const Graph& g, StorageId s) override;
  void on_banished(const Graph& g, StorageId s) override;
  void on_storage_recycled(const Graph& g, StorageId s) override;
  void on_materialized(const Graph& g,
                       std::span<const StorageId> storages) override;

 protected:
  /// `with_down`: see RegionWalk; `score` and `timeless`: see
  /// IndexedHeuristic.
  RegionHeuristic(bool with_down, ScoreIndex::RoundedScore score, bool timeless)
      : IndexedHeuristic(score, timeless),
        walk_(with_down, accesses_),
        logged_(walk_, accesses_),
        watched_(walk_, accesses_) {}

  /// The score of pooled `st` whose cost (the numerator) is `cost_ns`,
  /// rounded as the heuristic's scan rounds it; its denominator.
  virtual double score_with_cost(const Storage& st, std::int64_t cost_ns,
                                 std::int64_t now) const = 0;
  virtual double denominator(const Storage& st, std::int64_t now) const = 0;
  /// The numerator: c0 plus the regions' sums.
  static std::int64_t region_cost(const Storage& st, std::int64_t down_ns,
                                  std::int64_t up_ns);
  StorageId fast_scan(const ChooseContext& ctx) override;
  bool drops_index_on_churn() const override { return true; }
  /// Note [Lazy costs]: exact if the cache is, else c0 plus the bound.
  CostBound cost_bound(const Graph& g, StorageId s) override;
  CostBound refine(const Graph& g, StorageId s) override;
  /// The storage reads of the walk a dirty entry gets (cost_bound).
  static constexpr std::uint64_t kShortWalk = 64;
  /// A refining walk may reach this many times the cost known so far:
  /// 2-64 measured within noise of each other on nn.GRU's and TreeLSTM's
  /// traces; 64 was 3x slower on TreeLSTM at 0.3.
  static constexpr std::int64_t kRefineGrowth = 4;
  static constexpr std::uint64_t kUnlimitedVisits =
      std::numeric_limits<std::uint64_t>::max();
  /// In the checking choice modes, compares every kAuditEvery-th region read
  /// from a cache with a fresh walk (dtr::InternalError on a difference):
  /// both caches could miss the same event and still agree with each other.
  void audit(const Graph& g, StorageId s, std::int64_t down_ns,
             std::int64_t up_ns);
  /// The same for a bound read from a cache: it must not exceed the sums.
  void audit_bound(const Graph& g, StorageId s);
  static constexpr std::uint64_t kAuditEvery = 8;

  RegionWalk walk_;
  LoggedRegions logged_;    // the reference scan's
  WatchedRegions watched_;  // the index's and the pruned scan's

 private:
  struct Candidate {
    double score;  ///< exact, or a lower bound while open
    StorageId storage;
    bool exact;
  };
  class ScoreLimit;
  class CostLimit;
  /// Scores c exactly unless it scores above `best`; true if it is exact.
  bool resolve(const ChooseContext& ctx, Candidate& c, double best);
  CostBound walk_within(const Graph& g, StorageId s, std::uint64_t max_visits);
  void mark_stale_dirty();

  std::vector<Candidate> candidates_;  // in pool order
  std::vector<std::uint32_t> open_;    // indexes into candidates_
  std::uint64_t audit_reads_ = 0;
  Region audit_scratch_;
};

}  // namespace dtr
