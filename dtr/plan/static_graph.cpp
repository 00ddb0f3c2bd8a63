#include "dtr/plan/static_graph.h"

#include <algorithm>

#include "dtr/core/error.h"

namespace dtr::plan {

namespace {
// Who owns the storage a value lives in.
constexpr NodeId kConstantOwner = kNoNode;
constexpr NodeId kNoOwner = kConstantOwner - 1;
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
    std::int64_t bytes = 0;
    bool creates = false;
    for (const OutputSpec& out : op.outputs) {
      if (out.alias_of < 0) {
        creates = true;
        bytes += out.bytes;
      } else if (static_cast<std::size_t>(out.alias_of) >= op.inputs.size()) {
        throw InvalidArgument("[plan] " + program.source + ": operator " +
                              std::to_string(k) + " ('" + op.name +
                              "') aliases input " +
                              std::to_string(out.alias_of) + " of " +
                              std::to_string(op.inputs.size()));
      }
    }
    NodeId self = static_cast<NodeId>(g.nodes.size());
    for (std::size_t j = 0; j < op.outputs.size(); ++j) {
      const OutputSpec& out = op.outputs[j];
      owner.at(op.first_output + j) =
          out.alias_of < 0 ? self : owner_of(op.inputs[out.alias_of], k);
    }
    if (!creates) {
      // A view: charge it to the storage it views (Note [Static graph]).
      NodeId viewed =
          op.outputs.empty() ? kConstantOwner : owner[op.first_output];
      if (viewed == kConstantOwner) {
        g.fixed_cost_ns += op.cost_ns;
      } else {
        g.nodes[viewed].cost_ns += op.cost_ns;
      }
      continue;
    }
    Node node;
    node.name = op.name;
    node.cost_ns = op.cost_ns;
    node.bytes = bytes;
    node.op = static_cast<std::uint32_t>(k);
    node.backward = op.backward;
    for (trace::ValueId v : op.inputs) {
      NodeId d = owner_of(v, k);
      if (d != kConstantOwner) node.deps.push_back(d);
    }
    std::sort(node.deps.begin(), node.deps.end());
    node.deps.erase(std::unique(node.deps.begin(), node.deps.end()),
                    node.deps.end());
    g.nodes.push_back(std::move(node));
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
