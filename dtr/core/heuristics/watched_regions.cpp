#include "dtr/core/heuristics/watched_regions.h"

#include <algorithm>

#include "dtr/core/limits.h"

namespace dtr {

void WatchedRegions::on_storage_created(StorageId s) {
  if (cache_.size() <= s) {
    cache_.resize(s + 1);
    watchers_.resize(s + 1);
    prune_at_.resize(s + 1, 0);
  }
}

void WatchedRegions::invalidate(StorageId s) {
  Cache& c = cache_[s];
  if (!c.valid) return;
  c.valid = false;
  stale_.push_back(s);
}

void WatchedRegions::demote(StorageId s) {
  Cache& c = cache_[s];
  if (!c.valid || c.bound) return;
  c.bound = true;
  stale_.push_back(s);
}

void WatchedRegions::truncate(const Watcher& w) {
  if (w.index == kFrontier) {
    demote(w.storage);  // the interior's sums still count
    return;
  }
  Cache& c = cache_[w.storage];
  if (!c.valid) return;
  const std::int64_t before = lower_bound(w.storage);
  if (w.index < c.region.up_count) {
    c.up_len = std::min(c.up_len, w.index);
    c.down_lost = c.down_lost || c.region.shared;
  } else {
    c.down_len = std::min(c.down_len, w.index - c.region.up_count);
  }
  if (c.bound && lower_bound(w.storage) == before) return;
  c.bound = true;
  stale_.push_back(w.storage);  // its index entry may now be too high
}

void WatchedRegions::on_changed(StorageId s, Change change) {
  invalidate(s);
  for (const Watcher& w : watchers_[s]) {
    ++accesses_;
    if (cache_[w.storage].generation != w.generation) continue;
    if (change == Change::kShrinks) {
      truncate(w);
    } else {
      demote(w.storage);
    }
  }
  // A bound may count an evicted s (its interior): keep watching it.
  if (change != Change::kEdgesAdded) watchers_[s].clear();
}

void WatchedRegions::on_recycled(StorageId s) {
  on_changed(s, Change::kShrinks);
  Cache& c = cache_[s];
  c.region = Region{};
  c.up_len = c.down_len = 0;
  c.down_lost = false;
  c.bound = false;
  ++c.generation;  // the old storage's registrations are stale
}

void WatchedRegions::watch(StorageId member, const Watcher& w) {
  std::vector<Watcher>& list = watchers_[member];
  // A region recomputed again registers at the same members in the same
  // order, so its stale entry is often the last one: reuse it.
  if (!list.empty() && list.back().storage == w.storage) {
    list.back() = w;
    return;
  }
  if (list.size() >= prune_at_[member]) {
    std::erase_if(list, [&](const Watcher& w) {
      return cache_[w.storage].generation != w.generation;
    });
    prune_at_[member] =
        static_cast<std::uint32_t>(std::max<std::size_t>(8, 2 * list.size()));
  }
  list.push_back(w);
}

void WatchedRegions::register_members(StorageId s, bool bound) {
  Cache& c = cache_[s];
  c.valid = true;
  c.bound = bound;
  ++c.generation;
  c.up_len = c.region.up_count;
  c.down_len = c.region.down_count();
  c.down_lost = false;
  const std::vector<StorageId>& interior = c.region.interior;
  for (std::uint32_t i = 0; i < interior.size(); ++i) {
    watch(interior[i], {s, c.generation, i});
  }
  if (bound) return;  // Note [Regions that only grow]
  for (StorageId u : c.region.frontier) watch(u, {s, c.generation, kFrontier});
}

WatchedRegions::Sums WatchedRegions::exact_sums(const Graph& g, StorageId s) {
  Cache& c = cache_[s];
  if (!exact(s)) {
    walk_.walk(g, s, 0, nullptr, c.region);
    register_members(s, /*bound=*/false);
  }
  return {c.region.down_compute_ns, c.region.up_compute_ns};
}

bool WatchedRegions::within(const Graph& g, StorageId s, std::int64_t own_ns,
                            const RegionLimit& limit, Sums& out) {
  Cache& c = cache_[s];
  if (c.valid && c.bound &&
      limit.over(saturating_add(own_ns, lower_bound(s)))) {
    return false;  // the bound already loses
  }
  if (!exact(s)) {
    const std::int64_t known = lower_bound(s);
    const bool whole = walk_.walk(g, s, own_ns, &limit, scratch_);
    const std::int64_t seen =
        saturating_add(scratch_.down_compute_ns, scratch_.up_compute_ns);
    // A walk stopped early (by its visits) may have seen less than the
    // bound already known: keep the better of the two.
    if (!whole && seen <= known) return false;
    std::swap(c.region, scratch_);
    register_members(s, /*bound=*/!whole);
    if (!whole) return false;
  }
  out = {c.region.down_compute_ns, c.region.up_compute_ns};
  return true;
}

std::int64_t WatchedRegions::lower_bound(StorageId s) const {
  const Cache& c = cache_[s];
  if (!c.valid) return 0;
  const std::int64_t up = c.region.up_sum_before(c.up_len);
  return c.down_lost ? up
                     : saturating_add(up, c.region.down_sum_before(c.down_len));
}

}  // namespace dtr
