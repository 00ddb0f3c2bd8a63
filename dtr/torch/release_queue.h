#pragma once
/// What the program's handles and cells tell the runtime: a value's last
/// handle went (release), a held value's hold ended (unlock), a cell died
/// (forget). Every runtime call that can recompute or evict runs inside a
/// Scope; what happens meanwhile (a Cell dying, a Handle swapped) is
/// queued and applied when the outermost scope ends, after end_call or
/// abort_call unlocked the call's inputs, so that eager eviction sees them
/// unlocked.
#include <c10/util/SmallVector.h>

#include <unordered_map>
#include <vector>

#include "dtr/core/runtime.h"
#include "dtr/torch/run_listeners.h"

namespace dtr::pt {

class ReleaseQueue {
 public:
  ReleaseQueue(Runtime& runtime, RunListeners& listeners)
      : runtime_(runtime), listeners_(listeners) {}

  class Scope {
   public:
    explicit Scope(ReleaseQueue& q) : q_(q) { ++q_.depth_; }
    ~Scope() {
      if (--q_.depth_ == 0) q_.flush();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ReleaseQueue& q_;
  };
  /// Whether a runtime call is under way (a Scope is open).
  bool busy() const { return depth_ > 0; }

  /// The program's last handle on `id` went.
  void release(TensorId id) { add({id, false, true, false}); }
  /// The cell of `id` died: its hold ends if `held`, its reference goes if
  /// `referenced`, and its value is forgotten (Note [Forgetting dead cells]).
  void died(TensorId id, bool held, bool referenced) {
    add({id, held, referenced, true});
  }

 private:
  struct Pending {
    TensorId id;
    bool unlock;
    bool release;
    bool forget;
  };
  using DeadIds = c10::SmallVector<TensorId, 4>;  // forgotten last
  void add(Pending p);
  void flush();
  void forget(TensorId id);
  void retry_forget(StorageId s, DeadIds& dead);

  Runtime& runtime_;
  RunListeners& listeners_;
  std::vector<Pending> pending_;
  std::unordered_map<StorageId, std::vector<TensorId>> waiting_forget_;
  int depth_ = 0;
};

}  // namespace dtr::pt
