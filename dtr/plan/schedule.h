#pragma once
/// A static schedule: the order in which nodes of a StaticGraph are
/// computed and freed, and its check.
///
///   dtr::plan::Validation v =
///       dtr::plan::validate_schedule(graph, schedule, budget_bytes);
///   if (!v.ok) std::puts(v.problem.c_str());
///
/// Memory model (the same as the MILP's, Note [Checkmate formulation] in
/// milp.cpp): constants are resident throughout; computing a node needs
/// every node it reads resident and allocates its bytes, and the peak is
/// taken right after that allocation, before anything is freed.
#include <cstdint>
#include <string>
#include <vector>

#include "dtr/plan/static_graph.h"
#include "dtr/trace/program.h"

namespace dtr::plan {

enum class StepKind : std::uint8_t { kCompute, kFree };

struct ScheduleStep {
  StepKind kind;
  NodeId node;
  friend bool operator==(const ScheduleStep&, const ScheduleStep&) = default;
};

struct Schedule {
  std::vector<ScheduleStep> steps;
  /// Index into `steps` where each stage starts (stage t ends with the
  /// first computation of node t in the planners' frontier-advancing form).
  std::vector<std::size_t> stage_starts;
};

/// The trace's own order as a schedule: each node computed when the trace
/// calls its operator, freed when the program drops its storage's last
/// handle (what `dtr sim` does without a budget), outputs kept. Its peak is
/// the simulator's baseline peak. O(steps).
Schedule trace_order_schedule(const trace::Program& program,
                              const StaticGraph& graph);

/// What executing a schedule showed.
struct Validation {
  bool ok = false;
  std::string problem;          ///< why not ok: step, node, bytes
  std::int64_t peak_bytes = 0;  ///< constants included
  std::int64_t compute_ns = 0;  ///< every computation, fixed cost included
  std::uint64_t computations = 0;
};

/// Replays `schedule` exactly (integers, no solver tolerance): ok when every
/// node is computed at least once, never computed while resident, reads
/// only resident nodes, frees only resident ones, the peak stays within
/// `budget_bytes`, and every output is resident at the end. O(steps + edges).
Validation validate_schedule(const StaticGraph& graph, const Schedule& schedule,
                             std::int64_t budget_bytes);

/// Executes `schedule` on a dtr::Runtime with `budget_bytes` (eager policy:
/// a free is a release, a recomputation a materialize) after checking each
/// read with Runtime::is_defined, and reports the runtime's own peak and
/// compute. Not ok if the runtime had to evict anything on its own, ran out
/// of memory, or a read was undefined. O(steps + edges).
Validation execute_on_runtime(const StaticGraph& graph,
                              const Schedule& schedule,
                              std::int64_t budget_bytes);

}  // namespace dtr::plan
