// The budget: what the user set, scoped blocks on any number of threads,
// and the share left to DTR under a process-wide scope.
#include "dtr/core/error.h"
#include "dtr/torch/checkpoint_context.h"

namespace dtr::pt {

std::int64_t Context::set_budget(std::int64_t bytes, BudgetScope scope) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(bytes >= 0, "[dtr] set_budget: negative budget ", bytes);
  const std::int64_t previous =
      budget_.blocks().set(bytes, scope, std::this_thread::get_id());
  apply_budget();
  return previous;
}

std::uint64_t Context::push_budget(std::int64_t bytes, BudgetScope scope) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(bytes >= 0, "[dtr] budget: negative budget ", bytes);
  const std::uint64_t token =
      budget_.blocks().push(bytes, scope, std::this_thread::get_id());
  apply_budget();
  return token;
}

void Context::pop_budget(std::uint64_t token) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  budget_.blocks().pop(token);
  apply_budget();
}

void Context::apply_budget() {
  budget_.apply();
  runtime_.set_budget(budget_.limit());
  sync_process_budget(0);
}

std::int64_t Context::budget() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return budget_.limit();
}

BudgetScope Context::budget_scope() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return budget_.scope();
}

// Under a process scope (Note [What a budget bounds]) DTR's share follows
// what lives outside it, so it is worked out again before each allocation.
void Context::sync_process_budget(std::int64_t pending) {
  if (!budget_.bounds_process()) return;
  const std::int64_t mine = runtime_.stats().memory_bytes;
  const std::int64_t outside = accounting_.counters().bytes - mine - pending;
  runtime_.set_budget(budget_.dtr_share(outside));
}

}  // namespace dtr::pt
