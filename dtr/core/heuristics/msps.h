#pragma once
/// h_MSPS ("msps", Capuchin's score): compute of the evicted ancestors per
/// byte, from the same lazily computed regions as "dtr" (region_walk.h).
/// The score does not depend on the clock, so the score index holds it as
/// a timeless line (IndexedHeuristic).
#include "dtr/core/heuristics/index/region_heuristic.h"

namespace dtr {

/// h_MSPS (Capuchin) = [c0(S) + sum of c0 over evicted ancestors] / m(S).
class MspsHeuristic final : public RegionHeuristic {
 public:
  MspsHeuristic()
      : RegionHeuristic(/*with_down=*/false, &line_score, /*timeless=*/true) {}
  std::string_view name() const override { return "msps"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;

 protected:
  StorageId scan(const ChooseContext& ctx) override;
  std::int64_t cost_of(const Graph& g, StorageId s) override;
  double score_with_cost(const Storage& st, std::int64_t cost_ns,
                         std::int64_t now) const override {
    return per_byte(cost_ns, st.bytes);
  }
  double denominator(const Storage& st, std::int64_t now) const override {
    return static_cast<double>(st.bytes);
  }

 private:
  /// The score from its parts, rounded as the scan rounds it.
  static double per_byte(std::int64_t compute_ns, std::int64_t bytes);
  static double line_score(const StalenessLine& l, std::int64_t now) {
    return per_byte(l.cost_ns, l.bytes);
  }
};

}  // namespace dtr
