#include "dtr/core/heuristics/index/region_walk.h"

#include <limits>

#include "dtr/core/limits.h"

namespace dtr {

void RegionWalk::on_storage_created(StorageId s) {
  if (interior_mark_.size() <= s) {
    interior_mark_.resize(s + 1, 0);
    member_mark_.resize(s + 1, 0);
  }
}

void RegionWalk::on_recycled(StorageId s) {
  interior_mark_[s] = member_mark_[s] = 0;
}

bool RegionWalk::walk(const Graph& g, StorageId s, std::int64_t own_ns,
                      const RegionLimit* limit, Region& r) {
  r.members.clear();
  sum_before_.clear();
  frontier_.clear();
  r.up_count = 0;
  r.shared = false;
  r.down_compute_ns = r.up_compute_ns = 0;
  std::int64_t total = own_ns;
  std::uint64_t visits = 0;
  // The directions are closed separately (interior marks are per direction)
  // but share one member set, since an event in either invalidates.
  ++epoch_;
  ++interior_epoch_;
  bool whole = explore(g, s, /*upward=*/true, r, total, visits, limit);
  r.up_count = static_cast<std::uint32_t>(r.members.size());
  if (whole && with_down_) {
    ++interior_epoch_;
    whole = explore(g, s, /*upward=*/false, r, total, visits, limit);
  }
  r.interior_count = static_cast<std::uint32_t>(r.members.size());
  r.members.insert(r.members.end(), frontier_.begin(), frontier_.end());
  return whole;
}

bool RegionWalk::explore(const Graph& g, StorageId base, bool upward, Region& r,
                         std::int64_t& total, std::uint64_t& visits,
                         const RegionLimit* limit) {
  std::int64_t& sum = upward ? r.up_compute_ns : r.down_compute_ns;
  // Totals up to `safe` are known to be within the limit.
  std::int64_t safe = limit != nullptr
                          ? limit->safe_ns
                          : std::numeric_limits<std::int64_t>::max();
  const std::uint64_t max_visits =
      limit != nullptr ? limit->max_visits
                       : std::numeric_limits<std::uint64_t>::max();
  stack_.assign(1, base);
  auto visit = [&](StorageId u) {
    ++accesses_;
    ++visits;
    if (u == base) return;
    const Storage& us = g.storage(u);
    if (us.banished) return;
    // A storage not computed yet (an output of the op being performed) is
    // not evicted: it is about to exist, and costs nothing to lose. It is a
    // member all the same, since its eviction later changes the region.
    const bool frontier = us.resident || !us.computed;
    const bool found = member_mark_[u] == epoch_;
    member_mark_[u] = epoch_;
    if (frontier) {
      if (!found) frontier_.push_back(u);
      return;
    }
    if (interior_mark_[u] == interior_epoch_) return;
    interior_mark_[u] = interior_epoch_;
    if (found) {
      r.shared = true;  // found upward, now downward
    } else {
      r.members.push_back(u);
      sum_before_.push_back(sum);
    }
    // Each storage's cost is bounded (limits.h), a region's sum is not: a
    // many-output op counts its cost once per output storage.
    sum = saturating_add(sum, us.compute_ns);
    total = saturating_add(total, us.compute_ns);
    stack_.push_back(u);
  };
  while (!stack_.empty()) {
    // Note [Bounded regions]: the sum only grows, so past the limit the
    // candidate has lost. (Every push is followed by a check here.)
    if (total > safe) {
      if (limit->over(total)) return false;
      safe = total;
    }
    if (visits > max_visits) return false;
    StorageId s = stack_.back();
    stack_.pop_back();
    if (upward) {
      g.for_each_parent_storage(s, visit);
    } else {
      g.for_each_child_storage(s, visit);
    }
  }
  return true;
}

}  // namespace dtr
