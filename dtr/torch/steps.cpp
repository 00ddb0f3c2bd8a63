// Step boundaries: where a training step begins (dtr_torch.h begin_step).
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/dtr_torch.h"

namespace dtr::pt {

// Note [Step boundaries]
// A step is the segment of operator calls between two begin_step() calls.
// Three places call it: the forward() of a root module wrapped by
// checkpoint(module) (C++ holder and Python), and the trainer's loop at the
// start of each step; a loop that does both would count every step twice,
// so a begin_step() with no operator call since the last boundary is that
// same boundary, not a new, empty step. Listeners (auto, staging) hear of
// each boundary once, under the mutex and outside any op, so they may
// change the runtime's heuristic.
void Context::begin_step() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (steps_ > 0 && ops_ == ops_at_step_) return;
  DTR_CHECK(core_depth_ == 0, "[dtr] begin_step inside an operator call");
  ++steps_;
  ops_at_step_ = ops_;
  for (const StepListener& listener : step_listeners_) listener(steps_);
}

std::uint64_t Context::steps() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return steps_;
}

void Context::add_step_listener(StepListener listener) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  step_listeners_.push_back(std::move(listener));
}

void begin_step() {
  Context::get().begin_step();
}

}  // namespace dtr::pt
