#include "dtr/plan/static_graph.h"

#include <algorithm>

#include "dtr/core/error.h"

namespace dtr::plan {

namespace {
// Who owns the storage a value lives in.
constexpr NodeId kConstantOwner = kNoNode;
constexpr NodeId kNoOwner = kConstantOwner - 1;

void check_aliases(const trace::Program& program, std::size_t k) {
  const trace::ProgramOp& op = program.ops[k];
  for (const OutputSpec& out : op.outputs) {
    if (out.alias_of >= 0 &&
        static_cast<std::size_t>(out.alias_of) >= op.inputs.size()) {
      throw InvalidArgument("[plan] " + program.source + ": operator " +
                            std::to_string(k) + " ('" + op.name +
                            "') aliases input " + std::to_string(out.alias_of) +
                            " of " + std::to_string(op.inputs.size()));
    }
  }
}
}  // namespace

std::int64_t StaticGraph::baseline_cost_ns() const {
  std::int64_t total = fixed_cost_ns;
  for (const Node& n : nodes) total += n.cost_ns;
  return total;
}

StaticGraph build_static_graph(const trace::Program& program) {
  StaticGraph g;
  std::vector<NodeId> owner(program.value_count, kNoOwner);
  auto owner_of = [&](trace::ValueId v, std::size_t op_index) {
    if (v >= owner.size() || owner[v] == kNoOwner) {
      throw InvalidArgument("[plan] " + program.source + ": operator " +
                            std::to_string(op_index) + " reads value " +
                            std::to_string(v) + " before it is created");
    }
    return owner[v];
  };
  for (std::size_t k = 0; k < program.ops.size(); ++k) {
    const trace::ProgramOp& op = program.ops[k];
    if (op.constant) {
      for (std::size_t j = 0; j < op.outputs.size(); ++j) {
        owner.at(op.first_output + j) = kConstantOwner;
        g.constant_bytes += op.outputs[j].bytes;
      }
      g.fixed_cost_ns += op.cost_ns;
      continue;
    }
    check_aliases(program, k);
    const NodeId first = static_cast<NodeId>(g.nodes.size());
    NodeId next = first;
    for (std::size_t j = 0; j < op.outputs.size(); ++j) {
      const OutputSpec& out = op.outputs[j];
      owner.at(op.first_output + j) =
          out.alias_of < 0 ? next++ : owner_of(op.inputs[out.alias_of], k);
    }
    if (next == first) {
      // A view: its cost is paid once (Note [Static graph]).
      g.fixed_cost_ns += op.cost_ns;
      continue;
    }
    std::vector<NodeId> deps;
    for (trace::ValueId v : op.inputs) {
      NodeId d = owner_of(v, k);
      if (d != kConstantOwner) deps.push_back(d);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (const OutputSpec& out : op.outputs) {
      if (out.alias_of >= 0) continue;
      Node node;
      node.name = op.name;
      node.bytes = out.bytes;
      node.op = static_cast<std::uint32_t>(k);
      node.backward = op.backward;
      if (g.nodes.size() == first) {
        node.cost_ns = op.cost_ns;
        node.deps = deps;
      } else {
        node.deps = {first};  // a further output (Note [Static graph])
      }
      g.nodes.push_back(std::move(node));
    }
  }
  g.users.assign(g.nodes.size(), {});
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    for (NodeId d : g.nodes[i].deps) g.users[d].push_back(i);
  }
  g.value_node = owner;
  for (NodeId& v : g.value_node) {
    if (v == kNoOwner) v = kNoNode;
  }
  g.outputs.assign(g.nodes.size(), false);
  for (const trace::Step& step : program.steps) {
    if (step.kind != trace::StepKind::kPin) continue;
    NodeId o = owner.at(step.index);
    if (o != kConstantOwner && o != kNoOwner) g.outputs[o] = true;
  }
  return g;
}

}  // namespace dtr::plan
