#pragma once
/// An online DTR run as a static plan: which nodes the runtime computed in
/// each stage, turned into the planners' stage form.
///
///   dtr::plan::RunRecorder rec(program, graph);
///   config.observer = &rec;                  // dtr::sim::SimConfig
///   dtr::sim::simulate(program, baseline, config);
///   dtr::plan::StagePlan p = rec.plan();     // a MIP start, a candidate
///
/// Note [Runs as stage plans]: the run's computations, in its order, are
/// cut into stages (Note [Recompute stages] in stage_plan.h): a stage ends
/// with a node's first computation, and a new (recompute) stage begins
/// wherever the run computes a node that is not after every node computed
/// so far in the stage. So within each stage the run computes each node at
/// most once and in node order, the order in which the plan computes them.
/// A recomputed view is no node (the storage it views was recomputed
/// before, and recorded). From these computation sets the plan keeps each
/// node from its last computation to its next read, and only then (S), and
/// computes in each stage exactly what that S leaves out (R, as
/// fill_compute_sets does). Both are subsets of what the run held and
/// computed at the same points, so the plan needs no more memory at any
/// computation than the run had and no more compute than it spent: where
/// the run trains, the plan fits the same budget.
#include <cstdint>
#include <vector>

#include "dtr/core/observer.h"
#include "dtr/plan/stage_plan.h"
#include "dtr/plan/static_graph.h"
#include "dtr/trace/program.h"

namespace dtr::plan {

/// Watches a Runtime that replays `program` step by step (as the simulator
/// does: one call() per non-constant operator, in the program's order) and
/// records each computation as a node of `graph`, which must be
/// build_static_graph(program) and outlive the recorder.
class RunRecorder : public RuntimeObserver {
 public:
  RunRecorder(const trace::Program& program, const StaticGraph& graph);

  void on_op_end(const Graph& graph, OpId op, bool completed,
                 std::int64_t clock_ns) override;
  void on_replay_end(const Graph& graph, TensorId t, bool completed,
                     std::int64_t clock_ns) override;

  /// True once every node was computed at least once (a run that completed).
  bool complete() const;
  /// The run as a plan (Note [Runs as stage plans]). Throws
  /// dtr::InvalidArgument if the run did not complete.
  StagePlan plan() const;

 private:
  void recomputed(NodeId node);
  void close_stage(NodeId frontier);

  const StaticGraph& graph_;
  std::vector<std::uint32_t> calls_;      // program op of each call, in order
  std::size_t next_call_ = 0;             // the next call() to come
  std::vector<std::uint32_t> op_source_;  // runtime op -> program op
  std::vector<NodeId> node_of_op_;        // program op -> its first node
  std::vector<std::vector<NodeId>> computed_;  // each closed stage's nodes
  std::vector<NodeId> frontier_;               // each closed stage's
  std::vector<NodeId> open_;   // the stage being recorded, in order
  NodeId first_computed_ = 0;  // nodes computed for the first time
};

}  // namespace dtr::plan
