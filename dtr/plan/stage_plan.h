#pragma once
/// Plans in the frontier-advancing stage form shared by every planner
/// (Checkmate's R and S matrices): stage t computes node t for the first
/// time, after recomputing what it needs.
///
///   dtr::plan::StagePlan p = dtr::plan::plan_with_keep_rule(g, keep);
///   dtr::plan::Schedule s = dtr::plan::schedule_from_stages(g, p);
#include <functional>
#include <vector>

#include "dtr/plan/schedule.h"
#include "dtr/plan/static_graph.h"

namespace dtr::plan {

/// R[t][i]: node i is computed in stage t (i <= t, R[t][t] = 1).
/// S[t][i]: node i is in memory entering stage t (i < t).
struct StagePlan {
  std::vector<std::vector<bool>> R;
  std::vector<std::vector<bool>> S;
};

/// Whether node i must be in memory when stage t ends: in S[t + 1], or an
/// output when t is the last stage.
bool kept_after(const StaticGraph& g, const StagePlan& p, std::size_t t,
                NodeId i);

/// Fills R from S with the fewest computations (Checkmate's solve_r_opt):
/// stage t computes t, every node kept after t but not entering it, and
/// recursively every dependency of a computed node that is not in S[t].
/// O(n^2 + n * edges).
void fill_compute_sets(const StaticGraph& g, StagePlan& p);

/// Drops from S every node that its stage neither reads nor keeps after it
/// (last stage first), then refills R: the same schedule, but S now says
/// exactly what is held, as the MILP's memory accounting reads it.
void tidy_plan(const StaticGraph& g, StagePlan& p);

/// Turns a plan into steps, freeing each node as early as the plan allows:
/// right after its last read in the stage (or at the start of the stage if
/// it is not read), unless kept after the stage. A node already resident is
/// not computed again. The result is checked by validate_schedule; a plan
/// that keeps what it never had shows up there as a read of a missing node.
Schedule schedule_from_stages(const StaticGraph& g, const StagePlan& p);

/// Builds a plan stage by stage: R[t] from S[t] as fill_compute_sets does,
/// then S[t + 1] holds each node in memory during stage t that is still
/// needed later (an output, or read by a node after t) and for which
/// `keep(i, t)` is true. keep = always true is checkpoint-all.
StagePlan plan_with_keep_rule(
    const StaticGraph& g,
    const std::function<bool(NodeId node, std::size_t stage)>& keep);

}  // namespace dtr::plan
