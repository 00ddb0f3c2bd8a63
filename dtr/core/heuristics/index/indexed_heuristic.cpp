#include "dtr/core/heuristics/index/indexed_heuristic.h"

#include "dtr/core/error.h"

namespace dtr {

StorageId IndexedHeuristic::choose(const ChooseContext& ctx) {
  const ChoiceMode mode = choice_mode();
  if (ctx.sample_sqrt || ctx.min_bytes > 0 || mode == ChoiceMode::kScan) {
    return scan(ctx);
  }
  const bool forced =
      mode == ChoiceMode::kFastScan || mode == ChoiceMode::kCheckFastScan;
  const bool scanning = forced || scan_pays(ctx);
  StorageId victim = scanning ? fast_scan(ctx) : choose_indexed(ctx);
  scanned_searches_ += scanning ? 1 : 0;
  if (mode == ChoiceMode::kCheck || mode == ChoiceMode::kCheckFastScan) {
    StorageId reference = scan(ctx);
    DTR_ASSERT(victim == reference, "[", name(), "] the ",
               scanning ? "fast scan" : "index", " chose storage ", victim,
               " (score ",
               victim == kNoId ? 0.0 : score(ctx.graph, victim, ctx.now),
               ") but the scan chose ", reference, " (score ",
               reference == kNoId ? 0.0 : score(ctx.graph, reference, ctx.now),
               ") at clock ", ctx.now);
  }
  return victim;
}

// Note [Index or scan]
bool IndexedHeuristic::scan_pays(const ChooseContext& ctx) {
  if (!built_) {
    if (scans_before_rebuild_ == 0) return false;  // rebuild now
    --scans_before_rebuild_;
    return true;
  }
  if (!drops_index_on_churn() ||
      dirty_.size() * kScanRatio <= ctx.pool.size()) {
    churned_searches_ = 0;
    return false;
  }
  if (++churned_searches_ < kChurnedSearches) return false;
  churned_searches_ = 0;
  invalidate();  // dropped: no bookkeeping until it is rebuilt
  scans_before_rebuild_ = kScanRatio;
  return true;
}

void IndexedHeuristic::mark_dirty(StorageId s) {
  if (!built_) return;
  // Doubling: storages are created one at a time.
  if (is_dirty_.size() <= s) is_dirty_.resize(2 * (s + 1), false);
  if (is_dirty_[s]) return;
  is_dirty_[s] = true;
  dirty_.push_back(s);
}

void IndexedHeuristic::build(const ChooseContext& ctx) {
  index_.clear();
  for (StorageId s : dirty_) is_dirty_[s] = false;
  dirty_.clear();
  built_ = true;
  for (StorageId s : ctx.pool.slots()) {
    if (s != kNoId) mark_dirty(s);
  }
}

StorageId IndexedHeuristic::choose_indexed(const ChooseContext& ctx) {
  if (!built_) build(ctx);
  const Graph& g = ctx.graph;
  // cost_bound() may mark more storages dirty: index by position.
  for (std::size_t i = 0; i < dirty_.size(); ++i) {
    StorageId s = dirty_[i];
    is_dirty_[s] = false;
    if (ctx.pool.contains(g, s)) {
      index(ctx, s, cost_bound(g, s));
    } else {
      index_.erase(s, ctx.now);
    }
  }
  dirty_.clear();
  // Note [Lazy costs]: a victim indexed with a bound is refined until the
  // victim is exact.
  for (;;) {
    StorageId victim = index_.choose(ctx, accesses_);
    if (victim == kNoId || !inexact_[victim]) return victim;
    index(ctx, victim, refine(g, victim));
  }
}

void IndexedHeuristic::index(const ChooseContext& ctx, StorageId s,
                             CostBound cost) {
  index_.set(ctx.graph, s, cost.ns, ctx.now);
  if (inexact_.size() <= s) inexact_.resize(2 * (s + 1));
  inexact_[s] = !cost.exact;
}

}  // namespace dtr
