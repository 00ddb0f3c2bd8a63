// The Runtime's side of staging (Note [Staging] in staging.cpp): the
// evictions a plan prescribes, done without asking the heuristic.
#include "dtr/core/runtime.h"

namespace dtr {

void Runtime::enable_staging() {
  if (!staging_) staging_ = std::make_unique<Staging>();
}

void Runtime::begin_step() {
  if (staging_) staging_->begin_step();
}

// Evicts the current step's planned victims for a request of `bytes` that
// does not fit, stopping as soon as it does; make_room then searches for
// whatever is still missing. Any departure from the plan (a victim not in
// the pool, room left over, or too little freed) makes the step diverge.
void Runtime::evict_planned(std::int64_t bytes) {
  staging_->begin_room(bytes, planned_);
  std::size_t used = 0;
  for (; used < planned_.size() && !fits(bytes); ++used) {
    const StorageId s = planned_[used];
    if (s >= graph_.storage_count() || graph_.storage(s).dead ||
        !pool_.contains(graph_, s)) {
      break;
    }
    evict(s, /*eager=*/false);
    staging_->on_victim(s, /*planned=*/true);
  }
  // A request that ran out of memory when recorded, and runs dry again
  // with every planned victim gone, follows its plan: make_room throws the
  // same OutOfMemory and the caller falls back as it did then.
  const bool ran_out_again = staging_->planned_room_ran_out() && pool_.empty();
  if (used != planned_.size() || (!fits(bytes) && !ran_out_again)) {
    staging_->diverge();
  }
}

}  // namespace dtr
