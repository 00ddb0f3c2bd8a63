#include "dtr/plan/run_recording.h"

#include <algorithm>

#include "dtr/core/error.h"

namespace dtr::plan {

namespace {
constexpr std::uint32_t kUnknownOp = static_cast<std::uint32_t>(-1);
}  // namespace

RunRecorder::RunRecorder(const trace::Program& program,
                         const StaticGraph& graph)
    : graph_(graph) {
  for (const trace::Step& step : program.steps) {
    if (step.kind == trace::StepKind::kCompute &&
        !program.ops[step.index].constant) {
      calls_.push_back(static_cast<std::uint32_t>(step.index));
    }
  }
  node_of_op_.assign(program.ops.size(), kNoNode);
  for (NodeId i = graph.size(); i-- > 0;) node_of_op_[graph.nodes[i].op] = i;
}

void RunRecorder::close_stage(NodeId frontier) {
  frontier_.push_back(frontier);
  computed_.push_back(std::move(open_));
  open_.clear();
}

void RunRecorder::recomputed(NodeId node) {
  // A node computed again, or before one computed later in this stage:
  // the stage so far becomes a recompute stage (Note [Recompute stages]).
  if (!open_.empty() && node <= open_.back()) close_stage(first_computed_ - 1);
  open_.push_back(node);
}

void RunRecorder::on_op_end(const Graph& /*graph*/, OpId op, bool completed,
                            std::int64_t /*clock_ns*/) {
  if (!completed || next_call_ >= calls_.size()) return;
  const std::uint32_t source = calls_[next_call_++];
  if (op >= op_source_.size()) op_source_.resize(op + 1, kUnknownOp);
  op_source_[op] = source;
  // A first computation of a node ends its stage; a view's is no stage.
  for (NodeId node = node_of_op_[source];
       node < graph_.size() && graph_.nodes[node].op == source; ++node) {
    DTR_CHECK(node == first_computed_, "[plan] node ", node,
              " was computed for the first time after ", first_computed_,
              " others");
    open_.push_back(node);
    close_stage(node);
    ++first_computed_;
  }
}

void RunRecorder::on_replay_end(const Graph& graph, TensorId t, bool completed,
                                std::int64_t /*clock_ns*/) {
  if (!completed) return;
  const OpId op = graph.tensor(t).op;
  if (op >= op_source_.size() || op_source_[op] == kUnknownOp) return;
  // A replay computes every output of its op. A view's replay is no node:
  // the viewed storage's own replay, if any, was recorded.
  const std::uint32_t source = op_source_[op];
  for (NodeId node = node_of_op_[source];
       node < graph_.size() && graph_.nodes[node].op == source; ++node) {
    recomputed(node);
  }
}

bool RunRecorder::complete() const {
  return first_computed_ == graph_.size();
}

StagePlan RunRecorder::plan() const {
  if (!complete()) {
    throw InvalidArgument(
        "[plan] the recorded run computed " + std::to_string(first_computed_) +
        " of " + std::to_string(graph_.size()) + " nodes: it did not complete");
  }
  const std::size_t n = graph_.size();
  std::vector<std::vector<NodeId>> computed = computed_;
  StagePlan p;
  p.frontier = frontier_;
  if (!open_.empty()) {  // computations after the last node's first
    computed.push_back(open_);
    p.frontier.push_back(static_cast<NodeId>(n - 1));
  }
  const std::size_t stages = computed.size();
  p.S.assign(stages, std::vector<bool>(n, false));
  std::vector<bool> read(n), here(n);
  // pending[i]: node i is read at or after the stage below (or is an
  // output) before the run computes it again.
  std::vector<bool> pending(graph_.outputs.begin(), graph_.outputs.end());
  for (std::size_t t = stages; t-- > 0;) {
    std::fill(read.begin(), read.end(), false);
    std::fill(here.begin(), here.end(), false);
    for (NodeId k : computed[t]) {
      here[k] = true;
      for (NodeId d : graph_.nodes[k].deps) read[d] = true;
    }
    for (NodeId i = 0; i < n; ++i) {
      pending[i] = !here[i] && (read[i] || pending[i]);
      if (i < known(p, t)) p.S[t][i] = pending[i];
    }
  }
  fill_compute_sets(graph_, p);
  return p;
}

}  // namespace dtr::plan
