// The DTR context across fork(): Note [Fork].
#include <pthread.h>

#include <cstring>
#include <string>
#include <thread>

#include "dtr/core/error.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/counting_allocator.h"

namespace dtr::pt {

// Note [Fork]
// fork() copies one thread into the child and every lock as it was: a
// lock another thread held at that moment stays held forever, and the
// state it guarded may be half-written (Python's multiprocessing forks
// by default on Linux, DataLoader workers too). So the child of a fork
// never uses the parent's context: it gets a new one, in which nothing
// is locked and no value exists yet, and every record the parent made
// (Cell, Remat, Handle) carries the generation it was made in. A record
// of an earlier generation dies without bookkeeping, and using it -- an
// operator on a checkpointed tensor made before the fork, decheckpoint()
// of one -- throws dtr::Error. Tensors made in the child, plain tensors,
// and a child that never touches DTR work as usual.
// The child keeps the parent's settings: the base budget and its scope,
// the cost model, the thrash limit (its one warning may come again) and, when
// no other thread was inside DTR at the fork (prepare_fork() got the context's
// lock), the heuristic and the forking thread's budget() blocks, so that the
// block the fork happened in still applies and ends as it began. When another
// thread was inside DTR, only the plain scalar settings are read; a budget()
// block begun before the fork then ends with no effect (pop_budget). The
// allocator's lock is taken across the fork (its critical sections are short
// and wait for nothing), so its counts are whole in the child. The context's
// lock is only tried: a thread inside DTR may be waiting for the GIL, which the
// thread calling os.fork() holds.

namespace {

Context* g_current = nullptr;
std::uint64_t g_generation = 0;
bool g_locked_for_fork = false;  // prepare_fork() holds g_current's lock

}  // namespace

std::uint64_t current_fork_generation() {
  return g_generation;
}

Context* Context::make_first() {
  g_current = new Context();  // never destroyed: tensors may die during
                              // static destruction
  const int err = pthread_atfork(&prepare_fork, &after_fork_in_parent,
                                 &after_fork_in_child);
  DTR_ASSERT(err == 0, "pthread_atfork failed: ", std::strerror(err));
  return g_current;
}

Context& Context::get() {
  static Context* const first = make_first();
  (void)first;
  return *g_current;
}

void Context::prepare_fork() {
  g_locked_for_fork = g_current->mutex_.try_lock();
  cpu_accounting().lock_for_fork();
}

void Context::after_fork_in_parent() {
  cpu_accounting().unlock_after_fork();
  if (g_locked_for_fork) g_current->mutex_.unlock();
}

// The child has one thread, this one. The parent's context is left as it
// is, lock included: it is never used again.
void Context::after_fork_in_child() {
  cpu_accounting().unlock_after_fork();
  const Context& parent = *g_current;
  ++g_generation;
  g_current = new Context();
  g_current->inherit_settings(parent, g_locked_for_fork);
}

void Context::inherit_settings(const Context& parent, bool consistent) {
  cost_model_ = parent.cost_model_;
  set_thrash_limit(parent.thrash_.limit());
  budget_.blocks() =
      parent.budget_.blocks().for_child(std::this_thread::get_id(), consistent);
  if (consistent) {
    if (parent.auto_.enabled()) {
      set_heuristic(std::string(sim::kAutoHeuristic));
    } else {
      set_heuristic(std::string(parent.runtime_.heuristic().name()));
    }
  }
  apply_budget();
}

void Context::check_current(const CheckpointTensorImpl& w) const {
  DTR_CHECK(w.handle()->fork_generation == current_fork_generation(),
            "[dtr] a checkpointed tensor made before fork() cannot be used "
            "in the child process: its DTR state stayed with the parent. "
            "Make it in the child, or decheckpoint() it before forking");
}

}  // namespace dtr::pt
