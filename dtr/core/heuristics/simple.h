#pragma once
/// Heuristics that need no neighbourhood bookkeeping (paper Table a.4).
#include <queue>
#include <random>
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
  void rebuild(const Graph& g, const EvictionPool& pool);
  // The heap is built at the first search (a run that never evicts pays
  // nothing) and rebuilt when stale entries outnumber live ones.
  bool active_ = false;
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
};

/// h_DTR^local = c0(S) / (m(S) * s(S)).
class DtrLocalHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "dtr-local"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
  StorageId choose(const ChooseContext& ctx) override;
};

/// h_LRU: the least recently used storage (score = last access time).
class LruHeuristic final : public KeyedHeuristic {
 public:
  std::string_view name() const override { return "lru"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;

 protected:
  double key(const Graph& g, StorageId s) const override;
};

/// h_size (GreedyRemat): the largest storage first (score = 1 / m(S)).
class SizeHeuristic final : public KeyedHeuristic {
 public:
  std::string_view name() const override { return "size"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;

 protected:
  double key(const Graph& g, StorageId s) const override;
};

/// h_rand: a uniformly random evictable storage, reproducible by seed.
class RandomHeuristic final : public Heuristic {
 public:
  explicit RandomHeuristic(std::uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "random"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
  StorageId choose(const ChooseContext& ctx) override;

 private:
  std::mt19937_64 rng_;
};

}  // namespace dtr
