#pragma once
/// h_DTR, the paper's heuristic ("dtr"): exact evicted neighbourhoods
/// (App. C.2), computed lazily by EvictedRegions (Note [Lazy evicted
/// regions]).
#include "dtr/core/heuristics/evicted_regions.h"

namespace dtr {

/// h_DTR = [c0(S) + sum of c0 over e*(S)] / [m(S) * s(S)].
class DtrExactHeuristic final : public RegionHeuristic {
 public:
  DtrExactHeuristic() : RegionHeuristic(/*with_down=*/true) {}
  std::string_view name() const override { return "dtr"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
};

}  // namespace dtr
