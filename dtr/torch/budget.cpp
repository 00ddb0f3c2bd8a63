// The budget: what the user set, scoped blocks on any number of threads,
// and the share left to DTR under a process-wide scope.
#include <algorithm>

#include "dtr/core/error.h"
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/counting_allocator.h"

namespace dtr::pt {

std::int64_t Context::set_budget(std::int64_t bytes, BudgetScope scope) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(bytes >= 0, "[dtr] set_budget: negative budget ", bytes);
  const std::int64_t previous =
      budgets_.set(bytes, scope, std::this_thread::get_id());
  apply_budget();
  return previous;
}

std::uint64_t Context::push_budget(std::int64_t bytes, BudgetScope scope) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(bytes >= 0, "[dtr] budget: negative budget ", bytes);
  const std::uint64_t token =
      budgets_.push(bytes, scope, std::this_thread::get_id());
  apply_budget();
  return token;
}

void Context::pop_budget(std::uint64_t token) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  budgets_.pop(token);
  apply_budget();
}

void Context::apply_budget() {
  const BudgetBlocks::InForce now = budgets_.in_force();
  limit_bytes_ = now.bytes;
  budget_scope_ =
      now.bytes >= kUnlimited ? BudgetScope::kCheckpointed : now.scope;
  runtime_.set_budget(now.bytes);
  sync_process_budget(0);
}

std::int64_t Context::budget() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return limit_bytes_;
}

BudgetScope Context::budget_scope() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return budget_scope_;
}

// Note [What a budget bounds]
// BudgetScope::kCheckpointed (the default) bounds the storage of
// checkpointed values: activations, their gradients, whatever the model
// computes from checkpointed inputs. Parameters, their (plain) gradients,
// optimizer state and the input batch are outside it (`outside_bytes`).
// BudgetScope::kProcess bounds every byte the CPU allocator holds: before
// each allocation, inside the kernel or not, DTR evicts until everything
// live plus the new allocation fits, i.e. its own share is the limit
// minus what lives outside it at that moment.
void Context::sync_process_budget(std::int64_t pending) {
  if (budget_scope_ != BudgetScope::kProcess) return;
  const std::int64_t mine = runtime_.stats().memory_bytes;
  const std::int64_t outside = accounting_.counters().bytes - mine - pending;
  runtime_.set_budget(std::max<std::int64_t>(limit_bytes_ - outside, 0));
}

}  // namespace dtr::pt
