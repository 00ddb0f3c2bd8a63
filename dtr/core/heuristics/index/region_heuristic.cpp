#include "dtr/core/heuristics/index/region_heuristic.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dtr/core/error.h"
#include "dtr/core/limits.h"

namespace dtr {

void RegionHeuristic::on_storage_created(const Graph& g, StorageId s) {
  walk_.on_storage_created(s);
  watched_.on_storage_created(s);
}

void RegionHeuristic::on_op_recorded(const Graph& g, OpId op) {
  // New edges: the storages the op reads or writes may reach new storages.
  // The inputs' own regions gain the new outputs. A region passing through
  // an evicted input reaches them too (until that input is recomputed); one
  // ending at a resident input does not change.
  for (TensorId t : g.op(op).inputs) {
    StorageId s = g.tensor(t).storage;
    bool evicted = !g.storage(s).resident;
    logged_.on_edges_added(s, /*logged=*/evicted);
    if (evicted) {
      watched_.on_changed(s, WatchedRegions::Change::kEdgesAdded);
    } else {
      watched_.on_edges_added_resident(s);
    }
  }
  for (TensorId t : g.op(op).outputs) {
    StorageId s = g.tensor(t).storage;
    logged_.on_edges_added(s, /*logged=*/false);
    watched_.on_edges_added_resident(s);
  }
  mark_stale_dirty();
}

void RegionHeuristic::on_evicted(const Graph& g, StorageId s) {
  IndexedHeuristic::on_evicted(g, s);
  logged_.on_changed(s);
  watched_.on_changed(s, WatchedRegions::Change::kEvicted);
  mark_stale_dirty();
}

void RegionHeuristic::on_banished(const Graph& g, StorageId s) {
  IndexedHeuristic::on_banished(g, s);
  logged_.on_changed(s);
  watched_.on_changed(s, WatchedRegions::Change::kShrinks);
  mark_stale_dirty();
}

void RegionHeuristic::on_storage_recycled(const Graph& g, StorageId s) {
  IndexedHeuristic::on_storage_recycled(g, s);
  logged_.on_recycled(s);
  watched_.on_recycled(s);
  walk_.on_recycled(s);
  mark_stale_dirty();
}

void RegionHeuristic::on_materialized(const Graph& g,
                                      std::span<const StorageId> storages) {
  for (StorageId s : storages) {
    logged_.on_changed(s);
    watched_.on_changed(s, WatchedRegions::Change::kShrinks);
  }
  mark_stale_dirty();
}

void RegionHeuristic::mark_stale_dirty() {
  for (StorageId s : watched_.stale()) mark_dirty(s);
  watched_.stale().clear();
}

void RegionHeuristic::audit(const Graph& g, StorageId s, std::int64_t down_ns,
                            std::int64_t up_ns) {
  const ChoiceMode mode = choice_mode();
  if (mode != ChoiceMode::kCheck && mode != ChoiceMode::kCheckFastScan) return;
  if (++audit_reads_ % kAuditEvery != 0) return;
  walk_.walk(g, s, 0, nullptr, audit_scratch_);
  DTR_ASSERT(audit_scratch_.down_compute_ns == down_ns &&
                 audit_scratch_.up_compute_ns == up_ns,
             "[", name(), "] a cached region of storage ", s, " (down ",
             down_ns, " ns, up ", up_ns, " ns) differs from a fresh walk (",
             audit_scratch_.down_compute_ns, ", ", audit_scratch_.up_compute_ns,
             ")");
}

void RegionHeuristic::audit_bound(const Graph& g, StorageId s) {
  const ChoiceMode mode = choice_mode();
  if (mode != ChoiceMode::kCheck && mode != ChoiceMode::kCheckFastScan) return;
  if (++audit_reads_ % kAuditEvery != 0) return;
  walk_.walk(g, s, 0, nullptr, audit_scratch_);
  const std::int64_t sums = saturating_add(audit_scratch_.down_compute_ns,
                                           audit_scratch_.up_compute_ns);
  DTR_ASSERT(watched_.lower_bound(s) <= sums, "[", name(),
             "] a cached bound on the regions of storage ", s, " (",
             watched_.lower_bound(s), " ns) exceeds a fresh walk's sums (",
             sums, " ns)");
}

std::int64_t RegionHeuristic::region_cost(const Storage& st,
                                          std::int64_t down_ns,
                                          std::int64_t up_ns) {
  return saturating_add(saturating_add(st.compute_ns, down_ns), up_ns);
}

// Note [Bounded regions]: a candidate's DFS stops once its total scores
// above `best`. Totals up to safe_ns certainly do not: below it the quotient
// is at least a relative 1e-9 under `best`, far more than rounding moves it.
class RegionHeuristic::ScoreLimit final : public RegionLimit {
 public:
  ScoreLimit(const RegionHeuristic& h, const Storage& st, std::int64_t now,
             double best)
      : h_(h), st_(st), now_(now), best_(best) {
    double safe = best * h.denominator(st, now) * (1 - 1e-9);
    constexpr double kMax = 9.0e18;  // below the int64 range
    safe_ns = !(safe < kMax) ? std::numeric_limits<std::int64_t>::max()
              : safe < 0     ? 0
                             : static_cast<std::int64_t>(safe);
  }
  bool over(std::int64_t total_ns) const override {
    return h_.score_with_cost(st_, total_ns, now_) > best_;
  }

 private:
  const RegionHeuristic& h_;
  const Storage& st_;
  std::int64_t now_;
  double best_;
};

// Note [Lazy costs]: a refining walk stops once the total passes a cost.
class RegionHeuristic::CostLimit final : public RegionLimit {
 public:
  explicit CostLimit(std::int64_t max_ns) { safe_ns = max_ns; }
  bool over(std::int64_t total_ns) const override { return total_ns > safe_ns; }
};

IndexedHeuristic::CostBound RegionHeuristic::cost_bound(const Graph& g,
                                                        StorageId s) {
  ++accesses_;
  if (watched_.exact(s)) return {cost_of(g, s), true};
  // A short walk finishes most regions; a long one leaves a bound.
  return walk_within(g, s, kShortWalk);
}

IndexedHeuristic::CostBound RegionHeuristic::refine(const Graph& g,
                                                    StorageId s) {
  return walk_within(g, s, kUnlimitedVisits);
}

// A walk of at most `max_visits` storage reads, or (refining, unlimited
// reads) one allowed kRefineGrowth times the cost known so far: each
// refinement then at least quadruples the bound (so a storage's walks cost
// about a third more than its last one), and the index's refine loop ends.
IndexedHeuristic::CostBound RegionHeuristic::walk_within(
    const Graph& g, StorageId s, std::uint64_t max_visits) {
  const Storage& st = g.storage(s);
  const std::int64_t bound =
      saturating_add(st.compute_ns, watched_.lower_bound(s));
  CostLimit limit(max_visits == kUnlimitedVisits
                      ? saturating_mul(bound, kRefineGrowth)
                      : std::numeric_limits<std::int64_t>::max());
  limit.max_visits = max_visits;
  WatchedRegions::Sums sums;
  if (watched_.within(g, s, st.compute_ns, limit, sums)) {
    audit(g, s, sums.down_compute_ns, sums.up_compute_ns);
    return {region_cost(st, sums.down_compute_ns, sums.up_compute_ns), true};
  }
  audit_bound(g, s);
  return {saturating_add(st.compute_ns, watched_.lower_bound(s)), false};
}

bool RegionHeuristic::resolve(const ChooseContext& ctx, Candidate& c,
                              double best) {
  const Storage& st = ctx.graph.storage(c.storage);
  WatchedRegions::Sums sums;
  if (!watched_.within(ctx.graph, c.storage, st.compute_ns,
                       ScoreLimit(*this, st, ctx.now, best), sums)) {
    return false;
  }
  audit(ctx.graph, c.storage, sums.down_compute_ns, sums.up_compute_ns);
  c.score = score_with_cost(
      st, region_cost(st, sums.down_compute_ns, sums.up_compute_ns), ctx.now);
  c.exact = true;
  return true;
}

// Note [Pruned region scan]
StorageId RegionHeuristic::fast_scan(const ChooseContext& ctx) {
  const Graph& g = ctx.graph;
  candidates_.clear();
  open_.clear();
  double best = std::numeric_limits<double>::infinity();
  for (StorageId s : ctx.pool.slots()) {
    if (s == kNoId) continue;
    ++accesses_;
    const Storage& st = g.storage(s);
    if (watched_.exact(s)) {
      Candidate c{0, s, false};
      resolve(ctx, c, best);  // a valid cache: no DFS, never stopped
      best = std::min(best, c.score);
      candidates_.push_back(c);
    } else {
      open_.push_back(static_cast<std::uint32_t>(candidates_.size()));
      audit_bound(g, s);
      std::int64_t bound =
          saturating_add(st.compute_ns, watched_.lower_bound(s));
      candidates_.push_back({score_with_cost(st, bound, ctx.now), s,
                             /*exact=*/false});
    }
  }
  // Resolve the bounds at or below the best exact score, lowest first: a
  // heap, since most are never reached.
  std::erase_if(open_,
                [&](std::uint32_t i) { return candidates_[i].score > best; });
  auto lower_first = [&](std::uint32_t a, std::uint32_t b) {
    return candidates_[a].score > candidates_[b].score;
  };
  std::make_heap(open_.begin(), open_.end(), lower_first);
  while (!open_.empty()) {
    std::pop_heap(open_.begin(), open_.end(), lower_first);
    Candidate& c = candidates_[open_.back()];
    open_.pop_back();
    if (c.score > best) break;  // this bound and every later one lost
    if (resolve(ctx, c, best)) best = std::min(best, c.score);
  }
  // The reference scan's rule over the exact scores (the others lost).
  StorageId victim = kNoId;
  double victim_score = std::numeric_limits<double>::infinity();
  for (const Candidate& c : candidates_) {
    if (!c.exact || c.score > victim_score) continue;
    victim_score = c.score;
    victim = c.storage;
    if (c.score == 0.0) break;
  }
  return victim;
}

}  // namespace dtr
