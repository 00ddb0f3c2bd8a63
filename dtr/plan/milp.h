#pragma once
/// Checkmate's MILP (Jain et al., MLSys 2020) in its frontier-advancing
/// form, solved with COIN-OR CBC (Note [Checkmate formulation] in
/// milp.cpp).
///
///   dtr::plan::MilpSolution s = dtr::plan::solve_checkmate(
///       graph, {.budget_bytes = b, .deadline = dtr::plan::Deadline(30)});
///   if (s.has_solution) schedule_from_stages(graph, s.plan);
#include <cstdint>
#include <string>
#include <vector>

#include "dtr/plan/deadline.h"
#include "dtr/plan/planner.h"
#include "dtr/plan/stage_plan.h"

namespace dtr::plan {

/// Larger graphs are refused: the model has O(n^2 + n * edges) variables.
inline constexpr std::size_t kMaxMilpNodes = 400;

struct MilpOptions {
  std::int64_t budget_bytes = 0;  ///< constants included
  /// Bounds building the model and the solve together.
  Deadline deadline{60};
  /// Solve the LP relaxation instead (every variable continuous).
  bool relax = false;
  /// A plan to start from (a MIP start), e.g. the best fixed-rule plan that
  /// fits; not owned, may be null.
  const StagePlan* start = nullptr;
};

struct MilpSolution {
  /// kOptimal, kFeasible (a solution, optimality not proven), kInfeasible
  /// or kTimeLimit (no solution when the limit came).
  PlanStatus status = PlanStatus::kInfeasible;
  bool has_solution = false;
  StagePlan plan;                      ///< R and S rounded at 0.5
  std::vector<std::vector<double>> S;  ///< the solver's S values
  double objective_ns = 0;             ///< the solution's compute
  double lower_bound_ns = 0;           ///< the solver's bound
  std::string message;
};

/// Builds and solves the model (with DTR_MILP_LOG set in the environment,
/// CBC prints its log on stdout: for debugging, it spoils --json). Throws
/// dtr::InvalidArgument if the graph has more than kMaxMilpNodes nodes or the
/// budget is negative. The model (O(n * (n + edges)) rows) is built in one
/// piece; the deadline is checked stage by stage while building, and CBC
/// gets the time that is left (wall clock). A deadline that passes first is
/// status kTimeLimit.
MilpSolution solve_checkmate(const StaticGraph& g, const MilpOptions& options);

/// False when dtr was built without COIN-OR CBC: milp and lp-round are then
/// unavailable, and solve_checkmate throws dtr::InvalidArgument saying how
/// to rebuild.
bool milp_available();

}  // namespace dtr::plan
