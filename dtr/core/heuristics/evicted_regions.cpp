#include "dtr/core/heuristics/evicted_regions.h"

#include <algorithm>

namespace dtr {

namespace {

void erase_sorted(std::vector<StorageId>& v, StorageId x) {
  auto it = std::lower_bound(v.begin(), v.end(), x);
  if (it != v.end() && *it == x) v.erase(it);
}

}  // namespace

void EvictedRegions::on_storage_created(const Graph& g, StorageId s) {
  if (down_.size() <= s) {
    down_.resize(s + 1);
    up_.resize(s + 1);
    mark_.resize(2 * (s + 1), 0);
  }
}

void EvictedRegions::absorb(const Graph& g, Region& into, const Region& from,
                            StorageId evicted) {
  erase_sorted(into.frontier, evicted);
  scratch_.clear();
  std::set_union(into.frontier.begin(), into.frontier.end(),
                 from.frontier.begin(), from.frontier.end(),
                 std::back_inserter(scratch_));
  into.frontier.swap(scratch_);

  // Merge from.interior + {evicted} into into.interior, adding the cost of
  // each storage `into` did not have yet.
  std::vector<StorageId>& in = into.interior;
  scratch_.clear();
  std::size_t i = 0;
  auto merge_one = [&](StorageId x) {
    while (i < in.size() && in[i] < x) scratch_.push_back(in[i++]);
    if (i < in.size() && in[i] == x) {
      scratch_.push_back(in[i++]);
      return;
    }
    ++accesses_;
    into.compute_ns += g.storage(x).compute_ns;
    scratch_.push_back(x);
  };
  bool evicted_merged = false;
  for (StorageId x : from.interior) {
    if (!evicted_merged && evicted <= x) {
      if (evicted != x) merge_one(evicted);
      evicted_merged = true;
    }
    merge_one(x);
  }
  if (!evicted_merged) merge_one(evicted);
  while (i < in.size()) scratch_.push_back(in[i++]);
  in.swap(scratch_);
}

void EvictedRegions::rebuild(const Graph& g, StorageId base, bool upward) {
  Region& r = upward ? up_[base] : down_[base];
  r.interior.clear();
  r.frontier.clear();
  r.compute_ns = 0;
  // Two marks per storage: even slot = interior, odd slot = frontier.
  ++epoch_;
  stack_.assign(1, base);
  auto visit = [&](StorageId u) {
    ++accesses_;
    const Storage& us = g.storage(u);
    if (us.banished) return;
    if (us.material) {
      if (u != base && mark_[2 * u + 1] != epoch_) {
        mark_[2 * u + 1] = epoch_;
        r.frontier.push_back(u);
      }
      return;
    }
    if (mark_[2 * u] != epoch_) {
      mark_[2 * u] = epoch_;
      r.compute_ns += us.compute_ns;
      r.interior.push_back(u);
      stack_.push_back(u);
    }
  };
  while (!stack_.empty()) {
    StorageId s = stack_.back();
    stack_.pop_back();
    if (upward) {
      g.for_each_parent_storage(s, visit);
    } else {
      g.for_each_child_storage(s, visit);
    }
  }
  std::sort(r.interior.begin(), r.interior.end());
  std::sort(r.frontier.begin(), r.frontier.end());
}

void EvictedRegions::on_evicted(const Graph& g, StorageId s) {
  for (StorageId p : up_[s].frontier) {
    if (p != s) absorb(g, down_[p], down_[s], s);
  }
  for (StorageId c : down_[s].frontier) {
    if (c != s) absorb(g, up_[c], up_[s], s);
  }
  down_[s] = Region{};
  up_[s] = Region{};
}

void EvictedRegions::on_materialized(const Graph& g,
                                     std::span<const StorageId> storages) {
  std::vector<StorageId> affected_down, affected_up;
  for (StorageId s : storages) {
    rebuild(g, s, /*upward=*/false);
    rebuild(g, s, /*upward=*/true);
    affected_down.insert(affected_down.end(), up_[s].frontier.begin(),
                         up_[s].frontier.end());
    affected_up.insert(affected_up.end(), down_[s].frontier.begin(),
                       down_[s].frontier.end());
  }
  auto rebuild_all = [&](std::vector<StorageId>& ids, bool upward) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (StorageId s : ids) {
      if (g.storage(s).material) rebuild(g, s, upward);
    }
  };
  rebuild_all(affected_down, /*upward=*/false);
  rebuild_all(affected_up, /*upward=*/true);
}

double DtrExactHeuristic::score(const Graph& g, StorageId s,
                                std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  std::int64_t compute = st.compute_ns + regions_.down(s).compute_ns +
                         regions_.up(s).compute_ns;
  return cost_density(compute, st.bytes, now - st.last_access);
}

double MspsHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  const Storage& st = g.storage(s);
  if (st.bytes <= 0) return std::numeric_limits<double>::infinity();
  std::int64_t compute = st.compute_ns + regions_.up(s).compute_ns;
  return static_cast<double>(compute) / static_cast<double>(st.bytes);
}

}  // namespace dtr
