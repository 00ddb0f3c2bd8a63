#pragma once
/// Planners: each turns a StaticGraph and a budget into a Schedule with its
/// compute and peak, validated before it is returned.
///
///   dtr::plan::PlanResult r = dtr::plan::run_planner(
///       graph, {.planner = "milp", .budget_bytes = 1 << 20,
///               .time_limit_s = 60});
///   if (r.status == dtr::plan::PlanStatus::kOptimal) ...
///
/// Every outcome of a solver (optimal, feasible with a gap, infeasible,
/// time limit, a graph too large for it) is a status, not an exception.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dtr/plan/schedule.h"
#include "dtr/plan/stage_plan.h"
#include "dtr/plan/static_graph.h"

namespace dtr::plan {

enum class PlanStatus : std::uint8_t {
  kOptimal,      ///< proven least compute within the budget (milp)
  kFeasible,     ///< a schedule within the budget; milp: `gap` says how far
  kInfeasible,   ///< milp: proven that no schedule fits the budget
  kTimeLimit,    ///< milp: the limit came before any schedule was found
  kOverBudget,   ///< a fixed-rule planner's best schedule exceeds the budget
  kUnsupported,  ///< the planner does not apply to this graph (revolve), or
                 ///< dtr was built without it (milp, lp-round without CBC)
  kTooLarge,     ///< milp, lp-round: more nodes than kMaxMilpNodes
};
std::string_view to_string(PlanStatus status);

/// A plan found elsewhere, e.g. an online DTR run (run_recording.h).
struct NamedPlan {
  std::string name;  ///< where it comes from, for messages
  StagePlan plan;
};

struct PlanConfig {
  std::string planner = "milp";
  std::int64_t budget_bytes = 0;  ///< constants included
  /// milp and lp-round: wall-clock seconds for the whole call (the MIP
  /// start, building the model and the solve); the checks of a schedule
  /// found in time come after it. The other planners have no limit.
  double time_limit_s = 60;
  /// milp: plans to start from besides the fixed-rule ones; the cheapest
  /// that fits is CBC's start (the model takes its stages), and the MILP
  /// never returns a schedule that costs more than it. A plan of more than
  /// kMaxMilpNodes^2 / nodes stages is left out. Not owned; may be null;
  /// throws dtr::InvalidArgument if a plan's stages are malformed.
  const std::vector<NamedPlan>* starts = nullptr;
};

struct PlanResult {
  std::string planner;
  PlanStatus status = PlanStatus::kInfeasible;
  std::int64_t budget_bytes = 0;
  Schedule schedule;            ///< empty when no schedule was found
  Validation validation;        ///< exact replay of `schedule`
  Validation runtime;           ///< `schedule` executed on dtr::Runtime
  std::int64_t compute_ns = 0;  ///< of the schedule (validation)
  std::int64_t peak_bytes = 0;  ///< of the schedule (validation)
  /// milp, lp-round: a proven lower bound on the compute of every plan in
  /// the model's stage form at the budget (the solver's bound, at least the
  /// trace's own compute; a graph too large for the model has the latter),
  /// and (compute - bound) / compute; 0 for the other planners.
  double lower_bound_ns = 0;
  double gap = 0;
  double solve_s = 0;   ///< wall time of the planner
  std::string message;  ///< solver detail, or why no schedule
  /// True when a schedule exists and both checks accept it, or when no
  /// schedule was claimed. A false here is a bug in the planner.
  bool consistent() const;
};

/// "milp", "lp-round", "chen-sqrtn", "chen-greedy", "revolve",
/// "checkpoint-all".
const std::vector<std::string>& planner_names();

/// Throws dtr::InvalidArgument naming the known planners if `name` is not
/// one of them.
void check_planner_name(const std::string& name);

/// Runs one planner and validates its schedule (validate_schedule and
/// execute_on_runtime). Throws dtr::InvalidArgument for an unknown planner,
/// a negative budget or a time limit that is not positive and finite; a
/// graph a planner cannot take is a status (kTooLarge, kUnsupported).
PlanResult run_planner(const StaticGraph& g, const PlanConfig& config);

}  // namespace dtr::plan
