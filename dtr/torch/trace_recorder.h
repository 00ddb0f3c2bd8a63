#pragma once
/// Records what the runtime sees in the paper's trace format (see
/// dtr/trace/trace_writer.h), so the simulator can replay a real run.
/// Copy-on-write mutations are recorded in their
/// rewritten form (a CALL producing a new value), as docs/trace-format.md
/// describes.
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <unordered_map>

#include "dtr/core/graph.h"
#include "dtr/core/runtime.h"
#include "dtr/torch/run_listener.h"

namespace dtr::trace {
class TraceWriter;
}

namespace dtr::pt {

class TraceRecorder final : public RunListener {
 public:
  explicit TraceRecorder(std::ostream& out);
  ~TraceRecorder() override;
  void annotate(const std::string& what) override;
  void constant(TensorId id, std::int64_t bytes) override;
  /// An alias is written with its storage's size, read off `g`.
  void call(const Graph& g, const std::string& op,
            std::span<const TensorId> inputs, std::span<const TensorId> outputs,
            std::span<const OutputSpec> specs, std::int64_t time_ns,
            std::int64_t workspace_bytes) override;
  void release(TensorId id) override;
  /// A value made before recording began (Note [Values made before
  /// recording]): a CALL of no arguments ("made_before") of `bytes`, or,
  /// for a further value of a storage already written, an alias of
  /// `storage_root` ("made_before_alias").
  void made_before(TensorId id, std::int64_t bytes, TensorId storage_root,
                   std::int64_t cost_ns);
  /// A held value (resident until it dies) and its end: PIN and UNPIN,
  /// written only for values the trace defined and has not released
  /// (Note [Holds in the trace]).
  void pin(TensorId id) override;
  void unpin(TensorId id) override;

 private:
  // Note [Trace names]: the runtime reuses the ids of forgotten tensors,
  // so a tensor's name is "x<n>" with n counted by the recorder, fresh at
  // each definition.
  struct Name {
    std::uint64_t n = 0;
    bool live = false;    // defined, not released
    bool pinned = false;  // of which pinned
  };
  std::string define(TensorId id);
  std::string name_of(TensorId id) const;

  std::unique_ptr<trace::TraceWriter> writer_;
  std::unordered_map<TensorId, Name> names_;
  std::uint64_t next_name_ = 0;
};

}  // namespace dtr::pt
