#pragma once
/// What the runtime sees, for those who write it down: the trace recorder
/// (dtr.record, dtr::pt::TraceRecording) and auto's step recording
/// (step_recording.h). RunListeners::notify (run_listeners.h) sends every
/// event to every listener that is active, so both see the same run: operator
/// calls (copy-on-write included), constants, releases, holds and their ends,
/// annotations.
#include <cstdint>
#include <span>
#include <string>

#include "dtr/core/graph.h"
#include "dtr/core/runtime.h"

namespace dtr::pt {

class RunListener {
 public:
  virtual ~RunListener() = default;
  /// An operator call the runtime recorded, with its scratch (Note
  /// [Workspace]). For an alias output, specs[i].bytes is not meaningful:
  /// `g` gives its storage's size.
  virtual void call(const Graph& g, const std::string& op,
                    std::span<const TensorId> inputs,
                    std::span<const TensorId> outputs,
                    std::span<const OutputSpec> specs, std::int64_t cost_ns,
                    std::int64_t workspace_bytes) = 0;
  /// A value that cannot be recomputed (an input, a random result).
  virtual void constant(TensorId id, std::int64_t bytes) = 0;
  /// The program dropped its last reference to `id`.
  virtual void release(TensorId id) = 0;
  /// `id` is held resident until unpin (Note [Holds in the trace]).
  virtual void pin(TensorId id) = 0;
  virtual void unpin(TensorId id) = 0;
  /// A marker: "STEP", "LINEAGE_CUT".
  virtual void annotate(const std::string& what) = 0;
};

}  // namespace dtr::pt
