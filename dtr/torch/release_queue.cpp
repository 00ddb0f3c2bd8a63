#include "dtr/torch/release_queue.h"

namespace dtr::pt {

void ReleaseQueue::add(Pending p) {
  pending_.push_back(p);
  if (depth_ == 0) flush();
}

// Runs as a scope of its own (what it triggers is queued), without a
// Scope object, whose end would flush again.
void ReleaseQueue::flush() {
  ++depth_;
  try {
    DeadIds dead;
    while (!pending_.empty()) {
      const Pending p = pending_.back();
      pending_.pop_back();
      if (p.unlock) {
        // Held past its release: the unlock evicts it (the core's evict on
        // unlock), as the simulator's UNPIN does.
        runtime_.abort_call({&p.id, 1});
        listeners_.notify([&](RunListener& l) { l.unpin(p.id); });
        retry_forget(runtime_.graph().tensor(p.id).storage, dead);
      }
      if (p.release) {
        runtime_.release(p.id);
        listeners_.notify([&](RunListener& l) { l.release(p.id); });
      }
      if (p.forget) dead.push_back(p.id);
    }
    for (TensorId id : dead) forget(id);
  } catch (...) {
    --depth_;
    throw;
  }
  --depth_;
}

// Note [Forgetting dead cells]
// A dead Cell's value can never be read again: no handle, no Remat reads
// it. The runtime forgets it (Runtime::forget), which frees its records
// once its operator's outputs are all gone, so a training loop's graph
// stays as large as one step instead of growing with every step. A cell
// whose storage is still locked by a held sibling waits for the unlock.
// A trace being recorded names tensors on its own (Note [Trace names]).
void ReleaseQueue::forget(TensorId id) {
  const StorageId s = runtime_.graph().tensor(id).storage;
  if (runtime_.graph().storage(s).locks > 0) {
    waiting_forget_[s].push_back(id);
    return;
  }
  runtime_.forget(id);
}

void ReleaseQueue::retry_forget(StorageId s, DeadIds& dead) {
  auto it = waiting_forget_.find(s);
  if (it == waiting_forget_.end() || runtime_.graph().storage(s).locks > 0) {
    return;
  }
  dead.append(it->second.begin(), it->second.end());
  waiting_forget_.erase(it);
}

}  // namespace dtr::pt
