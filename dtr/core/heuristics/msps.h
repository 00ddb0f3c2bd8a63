#pragma once
/// h_MSPS ("msps", Capuchin's score): compute of the evicted ancestors per
/// byte, from the same lazily computed regions as "dtr" (evicted_regions.h).
#include "dtr/core/heuristics/evicted_regions.h"

namespace dtr {

/// h_MSPS (Capuchin) = [c0(S) + sum of c0 over evicted ancestors] / m(S).
class MspsHeuristic final : public RegionHeuristic {
 public:
  MspsHeuristic() : RegionHeuristic(/*with_down=*/false) {}
  std::string_view name() const override { return "msps"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;
};

}  // namespace dtr
