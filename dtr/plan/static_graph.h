#pragma once
/// The static graph the planners decide on, built from a trace:
///
///   dtr::trace::Program p = dtr::trace::read_trace_file("model.log");
///   dtr::plan::StaticGraph g = dtr::plan::build_static_graph(p);
///   // g.nodes: one per storage an operator creates, in trace order
///
/// Note [Static graph]: the graph holds what occupies memory in the
/// runtime, storage by storage, so that a schedule the runtime can run is
/// one the planners can express at no more compute and no more memory.
///  - A node is one storage an operator call creates, in the trace's order.
///    An operator with several outputs is a chain of nodes: the first
///    output carries the operator's cost and reads its inputs; each further
///    output costs nothing and reads the first. Each is kept and freed on
///    its own, as the runtime evicts and frees each output storage; getting
///    one back means computing the first (the runtime recomputes all
///    outputs together; the model may drop the first before the others).
///  - An alias output adds no bytes and reading it reads the storage it
///    views, so dependencies go to the node that owns that storage. An
///    operator whose outputs are all aliases (a view) is no node: its cost
///    is paid once (`fixed_cost_ns`); recomputing a storage never pays for
///    its views again, where the runtime replays them (a few microseconds
///    each on the traces), so the model never charges more than the runtime.
///  - In-place updates reach the graph as the trace reader rewrites them: a
///    copy-on-write operator creating a new storage, as the runtime sees it;
///    an accumulated gradient is such an update, or a new storage.
///  - Constants are counted in memory (`constant_bytes`, resident for the
///    whole run) but are never decided on, and reading them is no
///    dependency.
///  - Values still referenced at the end of the trace (its pinned outputs)
///    mark their nodes as outputs: they must be in memory when the schedule
///    ends.
#include <cstdint>
#include <string>
#include <vector>

#include "dtr/trace/program.h"

namespace dtr::plan {

using NodeId = std::uint32_t;

inline constexpr NodeId kNoNode = static_cast<NodeId>(-1);

struct Node {
  std::string name;          ///< the operator's name
  std::int64_t cost_ns = 0;  ///< the operator's cost (0: a further output)
  std::int64_t bytes = 0;    ///< bytes of the storage it creates
  std::vector<NodeId> deps;  ///< nodes it reads: sorted, unique, earlier
  std::uint32_t op = 0;      ///< the operator in the Program (outputs share it)
  bool backward = false;     ///< in the backward pass of the trace
};

struct StaticGraph {
  std::vector<Node> nodes;                 ///< in the trace's order
  std::vector<std::vector<NodeId>> users;  ///< sorted; users[i] read node i
  std::vector<bool> outputs;               ///< must be resident at the end
  /// The node owning each program value's storage (kNoNode: a constant).
  std::vector<NodeId> value_node;
  std::int64_t constant_bytes = 0;  ///< resident for the whole run
  std::int64_t fixed_cost_ns = 0;   ///< constants and views, paid once
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
