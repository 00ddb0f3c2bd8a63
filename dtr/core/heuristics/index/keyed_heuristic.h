#pragma once
/// The heap behind "lru" and "size", heuristics whose score needs no
/// neighbourhood bookkeeping (paper Table a.4).
#include <queue>
#include <vector>

#include "dtr/core/heuristic.h"

namespace dtr {

/// Base of heuristics whose score of a pooled storage changes only when its
/// last access does (LRU) or never (size). They keep the pool in a heap
/// ordered by (score, later pool entry first), so a search costs O(log n)
/// instead of a scan, with exactly the scan's choice. Stale heap entries
/// (evicted, re-pooled or re-keyed storages) are dropped lazily.
class KeyedHeuristic : public Heuristic {
 public:
  StorageId choose(const ChooseContext& ctx) override;
  void on_pool_insert(const Graph& g, StorageId s) override { push(g, s); }
  void on_access_changed(const Graph& g, StorageId s) override { push(g, s); }

 protected:
  /// The score, which must not depend on the clock.
  virtual double key(const Graph& g, StorageId s) const = 0;

 private:
  struct Entry {
    double key;
    std::uint64_t seq;
    StorageId storage;
  };
  struct Later {  // heap order: lowest key on top, ties: latest pool entry
    bool operator()(const Entry& a, const Entry& b) const {
      return a.key > b.key || (a.key == b.key && a.seq < b.seq);
    }
  };
  void push(const Graph& g, StorageId s) {
    if (active_) heap_.push({key(g, s), g.storage(s).pool_seq, s});
  }
  StorageId choose_from_heap(const ChooseContext& ctx);
  void rebuild(const Graph& g, const EvictionPool& pool);
  // The heap is built at the first search (a run that never evicts pays
  // nothing) and rebuilt when stale entries outnumber live ones.
  bool active_ = false;
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
};

}  // namespace dtr
