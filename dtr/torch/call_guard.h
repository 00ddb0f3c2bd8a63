#pragma once
/// RAII for one runtime call: begin_call locks (and rematerializes) the
/// inputs; every path out of the kernel -- end_call, an explicit abort, or
/// an exception anywhere in between -- releases those locks exactly once.
#include <c10/util/SmallVector.h>

#include <span>
#include <string_view>

#include "dtr/core/runtime.h"

namespace dtr::pt {

class CallGuard {
 public:
  CallGuard(Runtime& runtime, std::span<const TensorId> inputs)
      : runtime_(runtime), inputs_(inputs.begin(), inputs.end()) {
    runtime_.begin_call(inputs_);  // unlocks what it locked if it throws
  }
  ~CallGuard() {
    if (open_) runtime_.abort_call(inputs_);
  }
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;

  /// Records the call; end_call releases the locks itself, also on error.
  /// The ids point into the runtime's graph (Runtime::end_call).
  std::span<const TensorId> end(std::string_view name,
                                std::span<const OutputSpec> outputs,
                                std::int64_t cost_ns,
                                std::int64_t workspace_bytes = 0) {
    open_ = false;
    return runtime_.end_call(name, inputs_, outputs, cost_ns, workspace_bytes);
  }
  void abort() {
    open_ = false;
    runtime_.abort_call(inputs_);
  }

 private:
  Runtime& runtime_;
  c10::SmallVector<TensorId, 4> inputs_;  // Note [Inline call records]
  bool open_ = true;
};

}  // namespace dtr::pt
