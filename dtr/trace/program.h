#pragma once
/// A trace turned into a replayable program: the operators it calls and the
/// schedule of what the program does with its handles. Values are numbered
/// in creation order; the simulator maps them to runtime tensors.
#include <cstdint>
#include <string>
#include <vector>

#include "dtr/core/runtime.h"

namespace dtr::trace {

using ValueId = std::uint32_t;

struct ProgramOp {
  std::string name;
  std::int64_t cost_ns = 0;
  /// Scratch beside the outputs while it runs (Note [Workspace]).
  std::int64_t workspace_bytes = 0;
  std::vector<ValueId> inputs;
  std::vector<OutputSpec> outputs;  ///< sizes; alias = index into inputs
  ValueId first_output = 0;         ///< outputs are consecutive values
  bool constant = false;
  bool backward = false;  ///< after BACKWARD or a "*backward*" op
};

enum class StepKind : std::uint8_t {
  kCompute,  ///< index = op
  kRetain,   ///< index = value: one more handle (COPY)
  kRelease,  ///< index = value: one handle fewer (RELEASE, MUTATE, ...)
  kPin,      ///< index = value: must stay resident (PIN; the end)
  kUnpin,    ///< index = value: may be evicted again (UNPIN)
};

struct Step {
  StepKind kind;
  std::uint32_t index;
};

struct Program {
  std::string source;  ///< file name, for messages
  std::vector<ProgramOp> ops;
  std::vector<Step> steps;
  std::uint32_t value_count = 0;
  std::int64_t total_cost_ns = 0;
  std::size_t constant_count = 0;
  /// Indices into `steps` where a training step begins (ANNOTATE STEP),
  /// increasing and distinct; empty for a trace without step marks.
  std::vector<std::size_t> step_starts;
  /// Recorded by the LibTorch layer (ANNOTATE FORGETS_DEAD): the runtime
  /// that ran it forgot every dead value (Note [Forgetting dead values],
  /// dtr/sim/dead_values.h), and the simulator does the same.
  bool forgets_dead = false;
  /// Indices into `steps` before which a lineage cut happened (ANNOTATE
  /// LINEAGE_CUT), increasing and distinct: from there on no value can be
  /// recomputed, so values only lineage kept are dead.
  std::vector<std::size_t> lineage_cuts;
  /// Operators the trace performs (CALL + MUTATE + CONSTANT), the unit of
  /// the simulator's speed figure (ops/second), as in the reference.
  std::size_t trace_ops() const { return ops.size(); }
};

}  // namespace dtr::trace
