#pragma once
/// "lru": least recently used first.
#include "dtr/core/heuristics/index/keyed_heuristic.h"

namespace dtr {

/// h_LRU: the least recently used storage (score = last access time).
class LruHeuristic final : public KeyedHeuristic {
 public:
  std::string_view name() const override { return "lru"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;

 protected:
  double key(const Graph& g, StorageId s) const override;
};

}  // namespace dtr
