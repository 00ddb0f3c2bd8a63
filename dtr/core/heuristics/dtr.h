#pragma once
/// h_DTR, the paper's heuristic ("dtr"): exact evicted neighbourhoods
/// (App. C.2), computed lazily (Note [Lazy evicted regions]); the victim
/// comes from the score index, costs kept up to date by the regions'
/// watchers (Note [Region watchers]), or under churn from a scan that stops
/// losing regions early (Note [Pruned region scan]).
#include "dtr/core/heuristics/index/region_heuristic.h"

namespace dtr {

/// h_DTR = [c0(S) + sum of c0 over e*(S)] / [m(S) * s(S)].
class DtrExactHeuristic final : public RegionHeuristic {
 public:
  DtrExactHeuristic()
      : RegionHeuristic(/*with_down=*/true, &staleness_score,
                        /*timeless=*/false) {}
  std::string_view name() const override { return "dtr"; }
  double score(const Graph& g, StorageId s, std::int64_t now) override;

 protected:
  StorageId scan(const ChooseContext& ctx) override;
  std::int64_t cost_of(const Graph& g, StorageId s) override;
  double score_with_cost(const Storage& st, std::int64_t cost_ns,
                         std::int64_t now) const override {
    return cost_density(cost_ns, st.bytes, now - st.last_access);
  }
  double denominator(const Storage& st, std::int64_t now) const override {
    return static_cast<double>(st.bytes) *
           static_cast<double>(now - st.last_access);
  }
};

}  // namespace dtr
