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

/// Note [Recompute stages]: with `frontier` empty there is one stage per
/// node and stage t computes node t for the first time (Checkmate's
/// frontier-advancing form). Otherwise stage t may compute the nodes up to
/// frontier[t]: frontier starts at 0, grows by at most one per stage and
/// ends at the last node, and a stage where it grows computes the new node
/// for the first time; a stage where it stays is a recompute stage, which
/// computes no new node. A node is computed at most once per stage, in
/// node order, so a schedule that computes a node twice between two first
/// computations (as DTR does when it evicts a value it reads again) needs
/// recompute stages to be expressed.
///
/// R[t][i]: node i is computed in stage t (i <= frontier(t)).
/// S[t][i]: node i is in memory entering stage t (i < known(t)).
/// Each row has one entry per node; the entries outside those ranges are
/// false.
struct StagePlan {
  std::vector<std::vector<bool>> R;
  std::vector<std::vector<bool>> S;
  std::vector<NodeId> frontier;  ///< empty: frontier(t) = t
};

/// The number of stages: the rows of S.
inline std::size_t stage_count(const StagePlan& p) {
  return p.S.size();
}
/// The last node stage t may compute.
inline NodeId frontier(const StagePlan& p, std::size_t t) {
  return p.frontier.empty() ? static_cast<NodeId>(t) : p.frontier[t];
}
/// Whether stage t computes frontier(t) for the first time.
inline bool advances(const StagePlan& p, std::size_t t) {
  return t == 0 || frontier(p, t) != frontier(p, t - 1);
}
/// The nodes computed before stage t (0..known(t) - 1).
inline std::size_t known(const StagePlan& p, std::size_t t) {
  return t == 0 ? 0 : frontier(p, t - 1) + std::size_t{1};
}

/// Throws dtr::InvalidArgument unless `p` has stages as Note [Recompute
/// stages] says and an R and an S row of one entry per node of `g` each.
void check_stages(const StaticGraph& g, const StagePlan& p);

/// Whether node i must be in memory when stage t ends: in S[t + 1], or an
/// output when t is the last stage.
bool kept_after(const StaticGraph& g, const StagePlan& p, std::size_t t,
                NodeId i);

/// Fills R from S (and its stages) with the fewest computations
/// (Checkmate's solve_r_opt): stage t computes its new node, every node
/// kept after t but not entering it, and
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
