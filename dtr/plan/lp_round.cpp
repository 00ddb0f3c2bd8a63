#include "dtr/plan/lp_round.h"

namespace dtr::plan {

StagePlan round_stage_plan(const StaticGraph& g,
                           const std::vector<std::vector<double>>& S,
                           double threshold) {
  StagePlan p;
  p.S.assign(g.size(), std::vector<bool>(g.size(), false));
  for (std::size_t t = 0; t < g.size(); ++t) {
    for (std::size_t i = 0; i < t; ++i) p.S[t][i] = S[t][i] >= threshold;
  }
  // A rounded S may keep a node into stage t + 1 that stage t neither had
  // nor computed; fill_compute_sets then computes it in stage t.
  fill_compute_sets(g, p);
  return p;
}

const std::vector<double>& lp_round_thresholds() {
  static const std::vector<double> kThresholds{0.1, 0.2, 0.3, 0.4, 0.5,
                                               0.6, 0.7, 0.8, 0.9};
  return kThresholds;
}

}  // namespace dtr::plan
