// Step boundaries (begin_step) and staging for the LibTorch layer: the
// runtime replays the previous step's evictions (Note [Staging] in
// dtr/core/staging.cpp); this file says where steps begin.
#include "dtr/torch/checkpoint_context.h"

namespace dtr::pt {

void begin_step() {
  Context::get().begin_step();
}

bool set_staging(bool on) {
  return Context::get().set_staging(on);
}

// Calls that reach no operator (a second begin_step right after the first,
// e.g. `dtr train`'s loop and then the checkpointed module's forward) are
// one boundary: kernel calls, not checkpoint() of the inputs, decide.
void Context::begin_step() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (steps_ > 0 && ops_ == ops_at_step_) return;
  ops_at_step_ = ops_;
  ++steps_;
  runtime_.begin_step();
  if (recorder_ != nullptr) recorder_->annotate("STEP");
  for (const auto& listener : step_listeners_) listener(steps_);
}

bool Context::set_staging(bool on) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const bool was = runtime_.staging() != nullptr;
  if (on == was) return was;
  if (on) {
    runtime_.enable_staging();
  } else {
    const StagingStats& s = runtime_.staging()->stats();
    staging_totals_.staged_steps += s.staged_steps;
    staging_totals_.diverged_steps += s.diverged_steps;
    runtime_.disable_staging();
  }
  return was;
}

void Context::add_step_listener(std::function<void(std::uint64_t)> listener) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  step_listeners_.push_back(std::move(listener));
}

}  // namespace dtr::pt
