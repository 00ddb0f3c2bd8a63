// The budget: what the user set, scoped blocks on any number of threads,
// and the share left to DTR under a process-wide scope.
#include <algorithm>
#include <unordered_set>

#include "dtr/core/error.h"
#include "dtr/torch/checkpoint_context.h"
#include "dtr/torch/counting_allocator.h"

namespace dtr::pt {

// Note [Concurrent budgets]
// One runtime, one pool of evictable values, one budget for the process.
// Scoped budgets (dtr::pt::Budget, Python's `with dtr.budget(n)`) are
// blocks identified by a token, not saved-and-restored values, so blocks
// on different threads may end in any order and the budget afterwards is
// always what it was before them. While blocks are active the budget is
// the sum, over threads, of each thread's innermost block: two threads
// that each train under B share 2B, as if each had its own B (every
// thread's values compete in one pool, so the split between them is the
// heuristic's, not fixed). Concurrent blocks must agree on the scope.
// With no block active, the budget is the base that set_budget() sets.

std::int64_t Context::set_budget(std::int64_t bytes, BudgetScope scope) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(bytes >= 0, "[dtr] set_budget: negative budget ", bytes);
  bytes = std::min(bytes, kUnlimited);
  // Inside a block of this thread: that block's budget changes.
  const auto self = std::this_thread::get_id();
  for (auto b = budget_blocks_.rbegin(); b != budget_blocks_.rend(); ++b) {
    if (b->thread != self) continue;
    const std::int64_t previous = b->bytes;
    b->bytes = bytes;
    b->scope = scope;
    apply_budget();
    return previous;
  }
  const std::int64_t previous = base_budget_;
  base_budget_ = bytes;
  base_scope_ = scope;
  apply_budget();
  return previous;
}

std::uint64_t Context::push_budget(std::int64_t bytes, BudgetScope scope) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  DTR_CHECK(bytes >= 0, "[dtr] budget: negative budget ", bytes);
  const auto self = std::this_thread::get_id();
  for (const BudgetBlock& b : innermost_blocks()) {
    DTR_CHECK(b.thread == self || b.scope == scope,
              "[dtr] budget: another thread's budget block has a different "
              "scope; concurrent blocks must agree on it");
  }
  budget_blocks_.push_back(
      {++budget_tokens_, self, std::min(bytes, kUnlimited), scope});
  apply_budget();
  return budget_tokens_;
}

void Context::pop_budget(std::uint64_t token) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto it =
      std::find_if(budget_blocks_.begin(), budget_blocks_.end(),
                   [&](const BudgetBlock& b) { return b.token == token; });
  // A block begun before fork() whose bookkeeping stayed with the parent
  // (Note [Fork]) ends with no effect here.
  if (it == budget_blocks_.end() && token <= tokens_before_fork_) return;
  DTR_CHECK(it != budget_blocks_.end(), "[dtr] budget: block ", token,
            " is not active (ended twice?)");
  budget_blocks_.erase(it);
  apply_budget();
}

std::vector<Context::BudgetBlock> Context::innermost_blocks() const {
  std::vector<BudgetBlock> out;
  std::unordered_set<std::thread::id> seen;
  for (auto b = budget_blocks_.rbegin(); b != budget_blocks_.rend(); ++b) {
    if (seen.insert(b->thread).second) out.push_back(*b);
  }
  return out;
}

void Context::apply_budget() {
  std::int64_t bytes = base_budget_;
  BudgetScope scope = base_scope_;
  if (!budget_blocks_.empty()) {
    bytes = 0;
    for (const BudgetBlock& b : innermost_blocks()) {
      bytes = std::min(bytes + b.bytes, kUnlimited);  // each <= kUnlimited
    }
    scope = budget_blocks_.back().scope;
  }
  limit_bytes_ = bytes;
  budget_scope_ = bytes >= kUnlimited ? BudgetScope::kCheckpointed : scope;
  runtime_.set_budget(bytes);
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
  const std::int64_t outside = allocator_counters().bytes - mine - pending;
  runtime_.set_budget(std::max<std::int64_t>(limit_bytes_ - outside, 0));
}

}  // namespace dtr::pt
