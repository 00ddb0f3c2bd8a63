#pragma once
/// Scoped trace recording: while alive, every operator call, constant and
/// release the runtime sees is written to `out` in the paper's format
/// (dtr/trace/trace_writer.h). Plain tensors (parameters) are outside DTR's
/// control and do not appear.
///
///   std::ofstream f("run.trace");
///   { dtr::pt::TraceRecording rec(f); train_step(); }
#include <memory>
#include <ostream>

namespace dtr::pt {

class TraceRecorder;

class TraceRecording {
 public:
  explicit TraceRecording(std::ostream& out);
  ~TraceRecording();
  TraceRecording(const TraceRecording&) = delete;
  TraceRecording& operator=(const TraceRecording&) = delete;

 private:
  std::unique_ptr<TraceRecorder> recorder_;
};

}  // namespace dtr::pt
