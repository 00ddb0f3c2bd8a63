#pragma once
/// Records what the runtime sees in the paper's trace format (see
/// dtr/trace/trace_writer.h), so the simulator can replay a real run. Tensor
/// names are "x<TensorId>". Copy-on-write mutations are recorded in their
/// rewritten form (a CALL producing a new value), as DTR.md §b.6 describes.
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <unordered_set>

#include "dtr/core/graph.h"
#include "dtr/core/runtime.h"

namespace dtr::trace {
class TraceWriter;
}

namespace dtr::pt {

class TraceRecorder {
 public:
  explicit TraceRecorder(std::ostream& out);
  ~TraceRecorder();
  void annotate(const std::string& what);
  void constant(TensorId id, std::int64_t bytes);
  /// For an alias, specs[i].bytes is the aliased storage's size.
  void call(const std::string& op, std::span<const TensorId> inputs,
            std::span<const TensorId> outputs,
            std::span<const OutputSpec> specs, std::int64_t time_ns);
  void release(TensorId id);
  /// A held value (resident until it dies) and its end: PIN and UNPIN,
  /// written only for values the trace defined and has not released
  /// (Note [Holds in the trace]).
  void pin(TensorId id);
  void unpin(TensorId id);

 private:
  std::unique_ptr<trace::TraceWriter> writer_;
  std::unordered_set<TensorId> live_;    // defined, not released
  std::unordered_set<TensorId> pinned_;  // of which pinned
};

}  // namespace dtr::pt
