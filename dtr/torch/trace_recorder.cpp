#include "dtr/torch/trace_recorder.h"

#include <vector>

#include "dtr/core/error.h"
#include "dtr/trace/trace_writer.h"

namespace dtr::pt {

TraceRecorder::TraceRecorder(std::ostream& out)
    : writer_(std::make_unique<trace::TraceWriter>(out)) {}

TraceRecorder::~TraceRecorder() = default;

std::string TraceRecorder::define(TensorId id) {
  names_[id] = {next_name_++, true, false};
  return name_of(id);
}

std::string TraceRecorder::name_of(TensorId id) const {
  auto it = names_.find(id);
  DTR_ASSERT(it != names_.end(), "trace: tensor ", id, " has no name");
  return "x" + std::to_string(it->second.n);
}

void TraceRecorder::annotate(const std::string& what) {
  writer_->annotate(what);
}

void TraceRecorder::constant(TensorId id, std::int64_t bytes) {
  writer_->constant(define(id), bytes);
}

void TraceRecorder::call(const Graph& g, const std::string& op,
                         std::span<const TensorId> inputs,
                         std::span<const TensorId> outputs,
                         std::span<const OutputSpec> specs,
                         std::int64_t time_ns, std::int64_t workspace_bytes) {
  std::vector<std::string> args;
  args.reserve(inputs.size());
  for (TensorId in : inputs) args.push_back(name_of(in));
  std::vector<trace::TraceWriter::Result> results;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const int alias = specs[i].alias_of;
    const std::int64_t bytes =
        alias < 0 ? specs[i].bytes
                  : g.storage(g.tensor(inputs[alias]).storage).bytes;
    results.push_back({define(outputs[i]), bytes, alias});
  }
  writer_->call(op, args, results, time_ns, workspace_bytes);
}

void TraceRecorder::release(TensorId id) {
  auto it = names_.find(id);
  if (it == names_.end() || !it->second.live) return;
  writer_->release(name_of(id));
  it->second.live = false;
}

void TraceRecorder::made_before(TensorId id, std::int64_t bytes,
                                TensorId storage_root, std::int64_t cost_ns) {
  if (storage_root == kNoId) {
    writer_->call("made_before", {}, {{define(id), bytes, -1}}, cost_ns);
  } else {
    std::string root = name_of(storage_root);
    writer_->call("made_before_alias", {root}, {{define(id), bytes, 0}}, 0);
  }
}

// Note [Holds in the trace]
// A held value (a lineage cut, a direct write, a copy-on-write copy) is
// resident and locked until it dies; the simulator must not evict it
// either, or it predicts evictions where the runtime has no choice and
// misses the replays that bring it back (the loss, recomputed along the
// whole forward pass at the cut that ends backward). A hold is a PIN, its
// end an UNPIN. A value already released is left out: the simulator lets
// it go at its last release anyway. Values held before recording began
// are defined and pinned when it begins (Note [Values made before
// recording]).
void TraceRecorder::pin(TensorId id) {
  auto it = names_.find(id);
  if (it == names_.end() || !it->second.live || it->second.pinned) return;
  it->second.pinned = true;
  writer_->pin(name_of(id));
}

void TraceRecorder::unpin(TensorId id) {
  auto it = names_.find(id);
  if (it == names_.end() || !it->second.live || !it->second.pinned) return;
  it->second.pinned = false;
  writer_->unpin(name_of(id));
}

}  // namespace dtr::pt
