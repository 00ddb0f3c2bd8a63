#pragma once
/// The RunListeners that are active: the trace recorder while a recording
/// runs, auto's step recording while auto chooses the heuristic. notify()
/// sends each event to both, so that both see the same run.
#include "dtr/torch/auto_heuristic.h"
#include "dtr/torch/run_listener.h"
#include "dtr/torch/trace_recorder.h"

namespace dtr::pt {

class RunListeners {
 public:
  explicit RunListeners(AutoHeuristic& auto_heuristic)
      : auto_(auto_heuristic) {}
  /// Starts (or with nullptr stops) sending events to a trace recorder.
  void set_recorder(TraceRecorder* recorder) { recorder_ = recorder; }
  TraceRecorder* recorder() const { return recorder_; }

  /// Calls event(listener) for every active listener.
  template <typename F>
  void notify(F&& event) {
    if (recorder_ != nullptr) event(static_cast<RunListener&>(*recorder_));
    if (auto_.enabled()) event(static_cast<RunListener&>(auto_.step()));
  }

 private:
  AutoHeuristic& auto_;
  TraceRecorder* recorder_ = nullptr;
};

}  // namespace dtr::pt
