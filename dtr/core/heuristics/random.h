#pragma once
/// "random": a uniformly random evictable storage.
#include <random>

#include "dtr/core/heuristic.h"

namespace dtr {

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
