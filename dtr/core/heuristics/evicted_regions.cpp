#include "dtr/core/heuristics/evicted_regions.h"

#include <algorithm>

#include "dtr/core/limits.h"

namespace dtr {

void EvictedRegions::on_storage_created(const Graph& g, StorageId s) {
  if (cache_.size() <= s) {
    cache_.resize(s + 1);
    watchers_.resize(s + 1);
    prune_at_.resize(s + 1, 0);
    interior_mark_.resize(s + 1, 0);
    member_mark_.resize(s + 1, 0);
  }
}

void EvictedRegions::on_op_recorded(const Graph& g, OpId op) {
  // New edges: the storages the op reads or writes may reach new storages.
  // The inputs' own regions gain the new outputs. A region passing through
  // an evicted input reaches them too (until that input is recomputed); one
  // ending at a resident input does not change.
  for (TensorId t : g.op(op).inputs) {
    StorageId s = g.tensor(t).storage;
    if (g.storage(s).resident) {
      invalidate(s);
    } else {
      on_changed(s);
    }
  }
  for (TensorId t : g.op(op).outputs) {
    StorageId s = g.tensor(t).storage;
    if (s < cache_.size()) invalidate(s);
  }
}

void EvictedRegions::invalidate(StorageId s) {
  Cache& c = cache_[s];
  c.valid = false;
  if (c.watched_valid) {
    c.watched_valid = false;
    stale_.push_back(s);
  }
}

void EvictedRegions::on_changed(StorageId s) {
  events_.push_back(s);
  invalidate(s);
  // Note [Region watchers]: the caches that list s as a member.
  for (const Watcher& w : watchers_[s]) {
    ++accesses_;
    if (cache_[w.storage].generation == w.generation) invalidate(w.storage);
  }
  watchers_[s].clear();
}

void EvictedRegions::on_recycled(StorageId s) {
  // Caches holding s as a member were invalidated by the event logged when
  // s was banished; log one more so that stays true whatever the order.
  on_changed(s);
  Cache& c = cache_[s];
  c.members.clear();
  c.sorted = false;
  c.down_compute_ns = c.up_compute_ns = 0;
  c.stamp = 0;
  ++c.generation;  // the old storage's registrations are stale
  interior_mark_[s] = member_mark_[s] = 0;
}

void EvictedRegions::watch(StorageId member, StorageId s,
                           std::uint32_t generation) {
  std::vector<Watcher>& list = watchers_[member];
  // A region recomputed again registers at the same members in the same
  // order, so its stale entry is often the last one: reuse it.
  if (!list.empty() && list.back().storage == s) {
    list.back().generation = generation;
    return;
  }
  if (list.size() >= prune_at_[member]) {
    std::erase_if(list, [&](const Watcher& w) {
      return cache_[w.storage].generation != w.generation;
    });
    prune_at_[member] =
        static_cast<std::uint32_t>(std::max<std::size_t>(8, 2 * list.size()));
  }
  list.push_back({s, generation});
}

void EvictedRegions::explore(const Graph& g, StorageId base, bool upward,
                             Cache& c) {
  std::int64_t& sum = upward ? c.up_compute_ns : c.down_compute_ns;
  stack_.assign(1, base);
  auto visit = [&](StorageId u) {
    ++accesses_;
    if (u == base) return;
    const Storage& us = g.storage(u);
    // Storages not computed yet (outputs of the op being performed) are not
    // evicted: they are about to exist, and cost nothing to lose.
    if (us.banished || !us.computed) return;
    if (member_mark_[u] != epoch_) {
      member_mark_[u] = epoch_;
      c.members.push_back(u);
    }
    if (us.resident || interior_mark_[u] == interior_epoch_) return;
    interior_mark_[u] = interior_epoch_;
    // Each storage's cost is bounded (limits.h), a region's sum is not: a
    // many-output op counts its cost once per output storage.
    sum = saturating_add(sum, us.compute_ns);
    stack_.push_back(u);
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
}

const EvictedRegions::Cache& EvictedRegions::refresh(const Graph& g,
                                                     StorageId s) {
  Cache& c = cache_[s];
  if (c.valid) {
    // Still exact unless a later event touched one of its members.
    if (!c.sorted) {
      std::sort(c.members.begin(), c.members.end());
      c.sorted = true;
    }
    for (std::size_t i = c.stamp; i < events_.size(); ++i) {
      ++accesses_;
      if (std::binary_search(c.members.begin(), c.members.end(), events_[i])) {
        c.valid = false;
        break;
      }
    }
    if (c.valid) {
      c.stamp = events_.size();
      return c;
    }
  }
  recompute(g, s);
  return c;
}

EvictedRegions::Sums EvictedRegions::watched(const Graph& g, StorageId s) {
  Cache& c = cache_[s];
  if (!c.watched_valid) recompute(g, s);
  return {c.down_compute_ns, c.up_compute_ns};
}

void EvictedRegions::recompute(const Graph& g, StorageId s) {
  Cache& c = cache_[s];
  c.members.clear();
  c.down_compute_ns = c.up_compute_ns = 0;
  // The directions are closed separately (interior marks are per direction)
  // but share one member set, since an event in either invalidates.
  ++epoch_;
  ++interior_epoch_;
  explore(g, s, /*upward=*/true, c);
  if (with_down_) {
    ++interior_epoch_;
    explore(g, s, /*upward=*/false, c);
  }
  c.sorted = false;
  c.stamp = events_.size();
  c.valid = c.watched_valid = true;
  ++c.generation;
  for (StorageId u : c.members) watch(u, s, c.generation);
  // Keep the event log short: once it is long, drop it and every cache
  // (the watchers do not read the log).
  if (events_.size() > (1u << 20)) {
    events_.clear();
    for (Cache& other : cache_) other.valid = false;
  }
}

}  // namespace dtr
