#pragma once
/// "size": largest storage first.
#include "dtr/core/heuristics/index/keyed_heuristic.h"

namespace dtr {

/// h_size (GreedyRemat): the largest storage first (score = 1 / m(S)).
class SizeHeuristic final : public KeyedHeuristic {
 public:
  std::string_view name() const override { return "size"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;

 protected:
  double key(const Graph& g, StorageId s) const override;
};

}  // namespace dtr
