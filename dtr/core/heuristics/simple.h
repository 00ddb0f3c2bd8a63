#pragma once
/// Heuristics that need no neighbourhood bookkeeping (paper Table a.4).
#include <random>

#include "dtr/core/heuristic.h"

namespace dtr {

/// h_DTR^local = c0(S) / (m(S) * s(S)).
class DtrLocalHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "dtr-local"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
};

/// h_LRU: the least recently used storage (score = last access time).
class LruHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "lru"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
};

/// h_size (GreedyRemat): the largest storage first (score = 1 / m(S)).
class SizeHeuristic final : public Heuristic {
 public:
  std::string_view name() const override { return "size"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
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
