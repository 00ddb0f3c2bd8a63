#include "dtr/core/heuristics/index/watched_regions.h"

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
  const auto place = static_cast<Place>(w.place);
  if (place == Place::kFrontier) {
    demote(w.storage);  // the interior's sums still count
    return;
  }
  Cache& c = cache_[w.storage];
  if (!c.valid) return;
  const std::int64_t before = lower_bound(w.storage);
  const auto sum = static_cast<std::int64_t>(w.sum_before);
  Region& r = c.region;
  if (place == Place::kUp) {
    r.up_compute_ns = std::min(r.up_compute_ns, sum);
    if (r.shared) r.down_compute_ns = 0;
  } else {
    r.down_compute_ns = std::min(r.down_compute_ns, sum);
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
  // One allocation, not three, for the first few watchers of a storage.
  if (list.capacity() == 0) list.reserve(4);
  list.push_back(w);
}

void WatchedRegions::register_members(StorageId s, bool bound) {
  Cache& c = cache_[s];
  c.valid = true;
  c.bound = bound;
  ++c.generation;
  const Region& r = c.region;
  const std::vector<std::int64_t>& sums = walk_.sums_before();
  constexpr std::int64_t kMaxSum = (std::int64_t{1} << 62) - 1;
  for (std::uint32_t i = 0; i < r.interior_count; ++i) {
    const Place place = i < r.up_count ? Place::kUp : Place::kDown;
    watch(r.members[i], {s, c.generation,
                         static_cast<std::uint64_t>(std::min(sums[i], kMaxSum)),
                         static_cast<std::uint64_t>(place)});
  }
  if (bound) return;  // Note [Regions that only grow]
  for (std::size_t i = r.interior_count; i < r.members.size(); ++i) {
    watch(r.members[i],
          {s, c.generation, 0, static_cast<std::uint64_t>(Place::kFrontier)});
  }
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
  return saturating_add(c.region.down_compute_ns, c.region.up_compute_ns);
}

}  // namespace dtr
