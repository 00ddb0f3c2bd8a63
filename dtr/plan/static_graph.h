#pragma once
/// The static graph the planners decide on, built from a trace:
///
///   dtr::trace::Program p = dtr::trace::read_trace_file("model.log");
///   dtr::plan::StaticGraph g = dtr::plan::build_static_graph(p);
///   // g.nodes: one per operator that creates storage, in trace order
///
/// Note [Static graph]: a node is one operator call of the trace that
/// creates at least one storage. Its outputs are merged (a multi-output op
/// is computed, kept and freed as one unit, as the runtime recomputes all
/// outputs of an op together); an alias output adds no bytes and reading it
/// reads the storage it views, so dependencies go to the node that owns that
/// storage. An operator whose outputs are all aliases (a view) is no node:
/// its cost is added to the node owning the viewed storage (every
/// recomputation of the storage pays for the view again, a conservative
/// charge), or to `fixed_cost_ns` when it views a constant. Constants are
/// counted in memory (`constant_bytes`, resident for the whole run) but are
/// never decided on, and reading them is no dependency. Values still
/// referenced at the end of the trace (its pinned outputs) mark their nodes
/// as outputs: they must be in memory when the schedule ends.
#include <cstdint>
#include <string>
#include <vector>

#include "dtr/trace/program.h"

namespace dtr::plan {

using NodeId = std::uint32_t;

inline constexpr NodeId kNoNode = static_cast<NodeId>(-1);

struct Node {
  std::string name;          ///< the operator's name
  std::int64_t cost_ns = 0;  ///< its cost plus the views folded into it
  std::int64_t bytes = 0;    ///< bytes of the storages it creates
  std::vector<NodeId> deps;  ///< nodes it reads: sorted, unique, earlier
  std::uint32_t op = 0;      ///< index of the operator in the Program
  bool backward = false;     ///< in the backward pass of the trace
};

struct StaticGraph {
  std::vector<Node> nodes;                 ///< in the trace's order
  std::vector<std::vector<NodeId>> users;  ///< sorted; users[i] read node i
  std::vector<bool> outputs;               ///< must be resident at the end
  /// The node owning each program value's storage (kNoNode: a constant).
  std::vector<NodeId> value_node;
  std::int64_t constant_bytes = 0;  ///< resident for the whole run
  std::int64_t fixed_cost_ns = 0;   ///< views of constants
  std::size_t size() const { return nodes.size(); }
  /// Compute of one evaluation of every node, plus fixed_cost_ns: the
  /// compute of a schedule that never recomputes (the trace's own compute).
  std::int64_t baseline_cost_ns() const;
};

/// Builds the graph of `program` (Note [Static graph]). O(values + edges).
/// Throws dtr::InvalidArgument if the program reads a value before it is
/// created or aliases an input that does not exist.
StaticGraph build_static_graph(const trace::Program& program);

}  // namespace dtr::plan
