// Step boundaries (dtr_torch.h begin_step), the thrash limit that each
// step starts over, and staging: the runtime replays the previous step's
// evictions (Note [Staging] in dtr/core/staging.cpp); this file says where
// steps begin.
#include <cstdio>

#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/dtr_torch.h"

namespace dtr::pt {

void begin_step() {
  Context::get().begin_step();
}

bool set_staging(bool on) {
  return Context::get().set_staging(on);
}

// Note [Step boundaries]
// A step is the segment of operator calls between two begin_step() calls.
// Three places call it: the forward() of a root module wrapped by
// checkpoint(module) (C++ holder and Python), and the trainer's loop at the
// start of each step; a loop that does both would count every step twice,
// so a begin_step() with no operator call since the last boundary is that
// same boundary, not a new, empty step (kernel calls decide, not
// checkpoint() of the inputs). At a boundary the runtime's staging moves to
// the next step, the thrash limit starts over (Note [Thrash limit]), a
// recorded trace gets a STEP mark, and auto hears of it
// once, under the mutex and outside any op, so it may change the runtime's
// heuristic.
void Context::begin_step() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (steps_ > 0 && ops_ == ops_at_step_) return;
  DTR_CHECK(!releases_.busy(), "[dtr] begin_step inside an operator call");
  ++steps_;
  ops_at_step_ = ops_;
  runtime_.begin_step();
  const RuntimeStats& rs = runtime_.stats();
  if (thrash_.step_boundary(rs.model_compute_ns, rs.remat_compute_ns)) {
    std::fprintf(stderr, "%s\n", thrash_.warning().c_str());
  }
  sync_remat_limit();
  listeners_.notify([](RunListener& l) { l.annotate("STEP"); });
  auto_.end_step(runtime_);
}

std::uint64_t Context::steps() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return steps_;
}

void Context::sync_remat_limit() {
  runtime_.set_remat_limit(
      thrash_.remat_limit_ns(runtime_.stats().model_compute_ns));
}

double Context::set_thrash_limit(double ratio) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const double previous = thrash_.set_limit(ratio);
  sync_remat_limit();
  return previous;
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

}  // namespace dtr::pt
