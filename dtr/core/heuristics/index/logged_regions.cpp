#include "dtr/core/heuristics/index/logged_regions.h"

#include <algorithm>

namespace dtr {

void LoggedRegions::on_edges_added(StorageId s, bool logged) {
  if (!active_ || s >= cache_.size()) return;
  cache_[s].valid = false;
  if (logged) events_.push_back(s);
}

void LoggedRegions::on_changed(StorageId s) {
  if (!active_) return;
  if (s < cache_.size()) cache_[s].valid = false;
  events_.push_back(s);
}

void LoggedRegions::on_recycled(StorageId s) {
  // Caches holding s as a member were invalidated by the event logged when
  // s was banished; log one more so that stays true whatever the order.
  on_changed(s);
  if (s >= cache_.size()) return;
  Cache& c = cache_[s];
  c.region = Region{};
  c.sorted = false;
  c.stamp = 0;
}

const Region& LoggedRegions::regions(const Graph& g, StorageId s) {
  active_ = true;
  // Sized on demand: a run choosing by the index never pays for it.
  if (cache_.size() <= s) cache_.resize(g.storage_count());
  Cache& c = cache_[s];
  if (c.valid) {
    // Still exact unless a later event touched one of its members.
    std::vector<StorageId>& members = c.region.members;
    if (!c.sorted) {
      std::sort(members.begin(), members.end());
      c.sorted = true;
    }
    for (std::size_t i = c.stamp; i < events_.size(); ++i) {
      ++accesses_;
      if (std::binary_search(members.begin(), members.end(), events_[i])) {
        c.valid = false;
        break;
      }
    }
  }
  if (!c.valid) {
    walk_.walk(g, s, 0, nullptr, c.region);
    c.sorted = false;
    c.valid = true;
  }
  c.stamp = events_.size();
  // Keep the event log short: once it is long, drop it and every cache.
  if (events_.size() > (1u << 20)) {
    events_.clear();
    for (Cache& other : cache_) other.valid = false;
    c.valid = true;  // just checked or computed
    c.stamp = 0;
  }
  return c.region;
}

}  // namespace dtr
