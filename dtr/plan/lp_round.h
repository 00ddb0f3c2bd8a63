#pragma once
/// Checkmate's approximation: solve the LP relaxation of the MILP, round
/// S at thresholds 0.1, 0.2, ..., 0.9 (deterministic rounding), recover the
/// fewest computations for each rounded S (fill_compute_sets) and keep the
/// cheapest schedule that fits the budget.
#include <vector>

#include "dtr/plan/stage_plan.h"

namespace dtr::plan {

/// S rounded at `threshold` (S[t][i] >= threshold), R filled from it.
StagePlan round_stage_plan(const StaticGraph& g,
                           const std::vector<std::vector<double>>& S,
                           double threshold);

/// The thresholds lp-round tries.
const std::vector<double>& lp_round_thresholds();

}  // namespace dtr::plan
