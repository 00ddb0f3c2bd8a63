#pragma once
/// Chen et al. 2016 ("Training Deep Nets with Sublinear Memory Cost"):
/// keep only checkpoints of the forward pass, drop the rest once the
/// forward pass is done with it, and recompute a segment from its
/// checkpoint when the backward pass needs it (keeping what it recomputed
/// until its last use). Checkpoints are chosen among the articulation
/// points of the forward graph, so a segment hangs off one checkpoint.
#include <cstdint>
#include <vector>

#include "dtr/plan/stage_plan.h"
#include "dtr/plan/static_graph.h"

namespace dtr::plan {

/// Forward nodes whose removal disconnects the forward graph (undirected,
/// forward nodes only, constants ignored), in node order. O(n + edges).
std::vector<NodeId> forward_articulation_points(const StaticGraph& g);

/// Walks the forward nodes in order, adding `bytes` (or 1 per node when
/// `count_nodes`) since the last checkpoint, and checkpoints the next
/// articulation point once the sum reaches `segment` (Chen's Algorithm 3).
std::vector<bool> chen_checkpoints(const StaticGraph& g, std::int64_t segment,
                                   bool count_nodes);

/// The plan that keeps `checkpoints` (a flag per node) as described above.
StagePlan chen_plan(const StaticGraph& g, const std::vector<bool>& checkpoints);

/// Chen's sqrt(n) rule: a checkpoint every ceil(sqrt(forward nodes)) nodes.
StagePlan chen_sqrtn_plan(const StaticGraph& g);

/// The segment sizes chen-greedy tries for `g`: a geometric grid from the
/// smallest forward node to all forward bytes, and "no checkpoint at all".
std::vector<std::int64_t> chen_greedy_segments(const StaticGraph& g);

}  // namespace dtr::plan
