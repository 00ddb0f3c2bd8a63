#include "dtr/plan/schedule.h"

#include <algorithm>
#include <optional>

#include "dtr/core/error.h"
#include "dtr/core/heuristic.h"
#include "dtr/core/runtime.h"

namespace dtr::plan {

namespace {

std::string at(std::size_t step, NodeId node, const StaticGraph& g) {
  return "step " + std::to_string(step) + ": node " + std::to_string(node) +
         " ('" + g.nodes[node].name + "')";
}

// The checks shared by both executions, before a step runs; empty if fine.
std::string step_problem(const StaticGraph& g, const ScheduleStep& s,
                         std::size_t k, const std::vector<bool>& resident) {
  if (s.node >= g.size()) {
    return "step " + std::to_string(k) + ": node " + std::to_string(s.node) +
           " does not exist (" + std::to_string(g.size()) + " nodes)";
  }
  if (s.kind == StepKind::kFree) {
    if (!resident[s.node])
      return at(k, s.node, g) + " is freed but not resident";
    return {};
  }
  if (resident[s.node]) return at(k, s.node, g) + " is computed while resident";
  for (NodeId d : g.nodes[s.node].deps) {
    if (!resident[d]) {
      return at(k, s.node, g) + " reads node " + std::to_string(d) +
             ", which is not in memory";
    }
  }
  return {};
}

std::string end_problem(const StaticGraph& g, const std::vector<bool>& resident,
                        const std::vector<bool>& computed) {
  for (NodeId i = 0; i < g.size(); ++i) {
    if (!computed[i]) {
      return "node " + std::to_string(i) + " ('" + g.nodes[i].name +
             "') is never computed";
    }
    if (g.outputs[i] && !resident[i]) {
      return "output node " + std::to_string(i) + " ('" + g.nodes[i].name +
             "') is not in memory at the end";
    }
  }
  return {};
}

}  // namespace

Schedule trace_order_schedule(const trace::Program& program,
                              const StaticGraph& g) {
  Schedule out;
  std::vector<std::int64_t> handles(g.size(), 0);  // per node's storages
  std::vector<bool> resident(g.size(), false);
  std::vector<NodeId> node_of_op(program.ops.size(), kNoNode);
  for (NodeId i = g.size(); i-- > 0;) node_of_op[g.nodes[i].op] = i;  // first
  auto drop = [&](trace::ValueId v) {
    NodeId n = g.value_node.at(v);
    if (n == kNoNode || --handles[n] != 0 || !resident[n]) return;
    out.steps.push_back({StepKind::kFree, n});
    resident[n] = false;
  };
  for (const trace::Step& step : program.steps) {
    switch (step.kind) {
      case trace::StepKind::kCompute: {
        const trace::ProgramOp& op = program.ops[step.index];
        for (std::size_t j = 0; j < op.outputs.size(); ++j) {
          NodeId n = g.value_node.at(op.first_output + j);
          if (n != kNoNode) handles[n] += 1;
        }
        // Every output of the op: its nodes are consecutive.
        for (NodeId self = node_of_op[step.index];
             self < g.size() && g.nodes[self].op == step.index; ++self) {
          out.steps.push_back({StepKind::kCompute, self});
          resident[self] = true;
        }
        break;
      }
      case trace::StepKind::kRetain: {
        NodeId n = g.value_node.at(step.index);
        if (n != kNoNode) handles[n] += 1;
        break;
      }
      case trace::StepKind::kRelease:
        drop(step.index);
        break;
      case trace::StepKind::kPin:
      case trace::StepKind::kUnpin:
        break;
    }
  }
  return out;
}

Validation validate_schedule(const StaticGraph& g, const Schedule& schedule,
                             std::int64_t budget_bytes) {
  Validation v;
  std::vector<bool> resident(g.size(), false);
  std::vector<bool> computed(g.size(), false);
  std::int64_t memory = g.constant_bytes;
  v.peak_bytes = memory;
  v.compute_ns = g.fixed_cost_ns;
  auto fail = [&](std::string problem) {
    v.problem = std::move(problem);
    return v;
  };
  if (memory > budget_bytes) {
    return fail("the constants alone (" + std::to_string(memory) +
                " bytes) exceed the budget of " + std::to_string(budget_bytes) +
                " bytes");
  }
  for (std::size_t k = 0; k < schedule.steps.size(); ++k) {
    const ScheduleStep& s = schedule.steps[k];
    if (std::string p = step_problem(g, s, k, resident); !p.empty()) {
      return fail(std::move(p));
    }
    const Node& n = g.nodes[s.node];
    if (s.kind == StepKind::kFree) {
      resident[s.node] = false;
      memory -= n.bytes;
      continue;
    }
    resident[s.node] = true;
    computed[s.node] = true;
    memory += n.bytes;
    v.compute_ns += n.cost_ns;
    v.computations += 1;
    v.peak_bytes = std::max(v.peak_bytes, memory);
    if (memory > budget_bytes) {
      return fail(at(k, s.node, g) + " brings memory to " +
                  std::to_string(memory) + " bytes, over the budget of " +
                  std::to_string(budget_bytes));
    }
  }
  if (std::string p = end_problem(g, resident, computed); !p.empty()) {
    return fail(std::move(p));
  }
  v.ok = true;
  return v;
}

Validation execute_on_runtime(const StaticGraph& g, const Schedule& schedule,
                              std::int64_t budget_bytes) {
  Validation v;
  Runtime rt({.budget_bytes = budget_bytes, .policy = DeallocPolicy::kEager},
             make_heuristic("lru"));
  std::vector<std::optional<TensorId>> tensor(g.size());
  std::vector<bool> resident(g.size(), false);
  std::vector<bool> computed(g.size(), false);
  std::vector<TensorId> inputs;
  try {
    if (g.constant_bytes > 0) rt.add_constant(g.constant_bytes);
    for (std::size_t k = 0; k < schedule.steps.size(); ++k) {
      const ScheduleStep& s = schedule.steps[k];
      if (std::string p = step_problem(g, s, k, resident); !p.empty()) {
        v.problem = std::move(p);
        return v;
      }
      const Node& n = g.nodes[s.node];
      if (s.kind == StepKind::kFree) {
        rt.release(*tensor[s.node]);
        resident[s.node] = false;
      } else if (!tensor[s.node]) {
        inputs.clear();
        for (NodeId d : n.deps) inputs.push_back(*tensor[d]);
        const OutputSpec out{.bytes = n.bytes};
        tensor[s.node] = rt.call(n.name, inputs, {&out, 1}, n.cost_ns)[0];
        resident[s.node] = computed[s.node] = true;
      } else {
        rt.retain(*tensor[s.node]);
        rt.materialize(*tensor[s.node]);
        resident[s.node] = true;
      }
      if (s.kind == StepKind::kCompute) v.computations += 1;
      // The runtime must agree on what this step touched.
      if (rt.is_defined(*tensor[s.node]) != resident[s.node]) {
        v.problem = at(k, s.node, g) + " is " +
                    (resident[s.node] ? "not resident" : "still resident") +
                    " in the runtime";
        return v;
      }
    }
  } catch (const OutOfMemory& e) {
    v.problem = std::string("the runtime ran out of memory: ") + e.what();
    return v;
  }
  const RuntimeStats& st = rt.stats();
  v.peak_bytes = st.peak_bytes;
  v.compute_ns = st.model_compute_ns + st.remat_compute_ns + g.fixed_cost_ns;
  if (st.evictions != 0) {
    v.problem = "the runtime evicted " + std::to_string(st.evictions) +
                " storages on its own";
    return v;
  }
  v.problem = end_problem(g, resident, computed);
  v.ok = v.problem.empty();
  return v;
}

}  // namespace dtr::plan
