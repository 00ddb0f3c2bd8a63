#pragma once
/// Base of the heuristics whose score is cost / (bytes * staleness) with a
/// cost that changes only at events the heuristic sees ("dtr-local",
/// "dtr-eq", "dtr", and "msps" with no staleness): they find the scan's victim
/// in a ScoreIndex (Note [Exact victim from an index]) instead of scanning the
/// pool.
///
/// Note [Dirty costs]
/// A storage is "dirty" when its index entry may be out of date: it entered
/// the pool, was accessed, left it, or the heuristic saw an event that may
/// change its cost. Dirty entries are recomputed at the next search, where
/// the clock is known, each once however many events touched it. A
/// derived heuristic must mark every pooled storage whose cost may have
/// changed; the checking mode (ChoiceMode::kCheck) catches any it misses.
///
/// Note [Index or scan]
/// Recomputing a dirty entry costs far more than scoring a candidate in a
/// scan: the same cost, plus the index update (buckets, tournament path).
/// When events dirty a large share of a small pool between searches --
/// every eviction or replay along a long evicted chain changes the cost of
/// every candidate next to it -- keeping the index costs more than
/// scanning: "dtr-eq" on nn.GRU's trace, 219 us per search indexed against
/// 14 us scanning, 177 candidates. So, ski-rental style, for a heuristic
/// that opts in (drops_index_on_churn): kChurnedSearches searches in a row
/// that each find more than pool size / kScanRatio entries dirty drop the
/// index (no bookkeeping until it is rebuilt) and scan; after kScanRatio
/// scans, about what one rebuild costs, the next search rebuilds it. A pool
/// that dirties little keeps its index (the 10^5-candidate benchmarks
/// never drop it). The scan is the heuristic's fast_scan(): "dtr" and
/// "msps" prune theirs (Note [Pruned region scan]). Measured
/// (docs/benchmarks.md, "Index or scan", "Pruned region scan"): faster for
/// "dtr-eq", "dtr" and "msps" on the slow cells; mixed for "dtr-local",
/// which keeps its index. Both ways choose the scan's victim; kCheck
/// compares every choice with the reference scan, rebuilt indexes included.
///
/// Note [Lazy costs]
/// An entry may be indexed with a lower bound on its cost instead of the
/// cost itself (cost_bound). Rounded scores only grow with the cost, so
/// when the index's victim has an exact entry, no bounded entry can beat it
/// or tie with it to its advantage (a tie at the bound is a tie in the same
/// pool order), and it is the scan's victim. When the victim's entry is a
/// bound, the bound is refined (refine: tighter, or exact) and the index is
/// asked again. "dtr" and "msps" bound a region they have not walked by the
/// storage's own cost, or by what a stopped walk saw (Note [Regions that
/// only grow], Note [Truncated regions]), and refine it by a walk allowed
/// four times as much cost: a storage that loses is never walked to the
/// end.
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/core/heuristics/index/score_index.h"

namespace dtr {

class IndexedHeuristic : public Heuristic {
 public:
  /// Index, scan or both, per choice_mode(); sampling and the size filter
  /// always scan.
  StorageId choose(const ChooseContext& ctx) final;
  void on_pool_insert(const Graph& g, StorageId s) override { mark_dirty(s); }
  void on_access_changed(const Graph& g, StorageId s) override {
    if (!timeless_) mark_dirty(s);
  }
  void on_evicted(const Graph& g, StorageId s) override { mark_dirty(s); }
  void on_banished(const Graph& g, StorageId s) override { mark_dirty(s); }
  void on_storage_recycled(const Graph& g, StorageId s) override {
    mark_dirty(s);
  }

  /// Note [Index or scan]: the dirty share above which a search counts as
  /// churned, and the number of scans before the index is rebuilt; the
  /// churned searches in a row that drop it.
  static constexpr std::size_t kScanRatio = 25;
  static constexpr std::size_t kChurnedSearches = 4;
  /// Searches that scanned because the index was dropped (for tests).
  std::uint64_t scanned_searches() const { return scanned_searches_; }

 protected:
  IndexedHeuristic() : IndexedHeuristic(&staleness_score, false) {}
  /// `score`: the heuristic's rounded score of an index line, as its scan
  /// rounds it; `timeless`: the score does not depend on the clock, so an
  /// access changes nothing (ScoreIndex).
  IndexedHeuristic(ScoreIndex::RoundedScore score, bool timeless)
      : index_(score, timeless), timeless_(timeless) {}
  /// cost / (bytes * staleness), as cost_density rounds it.
  static double staleness_score(const StalenessLine& l, std::int64_t now) {
    return cost_density(l.cost_ns, l.bytes, now - l.last_access);
  }
  /// The reference: scan_pool with the heuristic's score.
  virtual StorageId scan(const ChooseContext& ctx) = 0;
  /// The scan used once churn dropped the index (Note [Index or scan]):
  /// the reference's victim, found however the heuristic finds it fastest.
  virtual StorageId fast_scan(const ChooseContext& ctx) { return scan(ctx); }
  /// The cost in the score of pooled storage `s` now (the numerator).
  virtual std::int64_t cost_of(const Graph& g, StorageId s) = 0;
  /// Note [Lazy costs]: a cost, or a lower bound on it when the exact cost
  /// is dear; by default the exact cost_of().
  struct CostBound {
    std::int64_t ns;
    bool exact;
  };
  virtual CostBound cost_bound(const Graph& g, StorageId s) {
    return {cost_of(g, s), true};
  }
  /// A strictly tighter bound on the cost of `s`, or its exact cost.
  virtual CostBound refine(const Graph& g, StorageId s) {
    return {cost_of(g, s), true};
  }
  /// The index exists (it is built at the first search, so a run that never
  /// evicts pays nothing); events before that need no bookkeeping.
  bool indexing() const { return built_; }
  /// See Note [Dirty costs]. A no-op while the index does not exist.
  void mark_dirty(StorageId s);
  /// Note [Index or scan]: whether churn drops the index.
  virtual bool drops_index_on_churn() const { return false; }
  /// Rebuilds the index from the pool at the next search.
  void invalidate() { built_ = false; }

 private:
  StorageId choose_indexed(const ChooseContext& ctx);
  void index(const ChooseContext& ctx, StorageId s, CostBound cost);
  bool scan_pays(const ChooseContext& ctx);
  void build(const ChooseContext& ctx);

  ScoreIndex index_;
  std::vector<StorageId> dirty_;
  std::vector<bool> is_dirty_;  // per storage
  std::vector<bool> inexact_;   // per storage: indexed with a bound
  // Note [Index or scan]: scans left before the index is rebuilt.
  std::size_t scans_before_rebuild_ = 0;
  std::size_t churned_searches_ = 0;  // in a row
  std::uint64_t scanned_searches_ = 0;
  bool built_ = false;
  bool timeless_;
};

}  // namespace dtr
