#include "dtr/torch/trace_recorder.h"

#include <vector>

#include "dtr/trace/trace_writer.h"

namespace dtr::pt {

namespace {
std::string name_of(TensorId id) {
  return "x" + std::to_string(id);
}
}  // namespace

TraceRecorder::TraceRecorder(std::ostream& out)
    : writer_(std::make_unique<trace::TraceWriter>(out)) {}

TraceRecorder::~TraceRecorder() = default;

void TraceRecorder::annotate(const std::string& what) {
  writer_->annotate(what);
}

void TraceRecorder::constant(TensorId id, std::int64_t bytes) {
  writer_->constant(name_of(id), bytes);
  live_.insert(id);
}

void TraceRecorder::call(const std::string& op,
                         std::span<const TensorId> inputs,
                         std::span<const TensorId> outputs,
                         std::span<const OutputSpec> specs,
                         std::int64_t time_ns) {
  std::vector<std::string> args;
  args.reserve(inputs.size());
  for (TensorId in : inputs) args.push_back(name_of(in));
  std::vector<trace::TraceWriter::Result> results;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::int64_t bytes = specs[i].bytes;
    results.push_back({name_of(outputs[i]), bytes, specs[i].alias_of});
    live_.insert(outputs[i]);
    pinned_.erase(outputs[i]);  // an id the runtime reused
  }
  writer_->call(op, args, results, time_ns);
}

void TraceRecorder::release(TensorId id) {
  writer_->release(name_of(id));
  live_.erase(id);
}

// Note [Holds in the trace]
// A held value (a lineage cut, a direct write, a copy-on-write copy) is
// resident and locked until it dies; the simulator must not evict it
// either, or it predicts evictions where the runtime has no choice and
// misses the replays that bring it back (the loss, recomputed along the
// whole forward pass at the cut that ends backward). A hold is a PIN, its
// end an UNPIN. A value the trace never defined (held before recording
// began) or already released is left out: the simulator has no name for
// it, and lets a released value go at its last release anyway.
void TraceRecorder::pin(TensorId id) {
  if (live_.count(id) == 0 || !pinned_.insert(id).second) return;
  writer_->pin(name_of(id));
}

void TraceRecorder::unpin(TensorId id) {
  if (live_.count(id) == 0 || pinned_.erase(id) == 0) return;
  writer_->unpin(name_of(id));
}

}  // namespace dtr::pt
