#include "dtr/torch/budget_blocks.h"

#include <algorithm>
#include <unordered_set>

#include "dtr/core/error.h"

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

BudgetBlocks::InForce BudgetBlocks::in_force() const {
  if (blocks_.empty()) return {base_bytes_, base_scope_};
  std::int64_t bytes = 0;
  for (const Block& b : innermost_blocks()) {
    bytes = std::min(bytes + b.bytes, kUnlimited);  // each <= kUnlimited
  }
  return {bytes, blocks_.back().scope};
}

std::int64_t BudgetBlocks::set(std::int64_t bytes, BudgetScope scope,
                               std::thread::id thread) {
  bytes = std::min(bytes, kUnlimited);
  for (auto b = blocks_.rbegin(); b != blocks_.rend(); ++b) {
    if (b->thread != thread) continue;
    const std::int64_t previous = b->bytes;
    b->bytes = bytes;
    b->scope = scope;
    return previous;
  }
  const std::int64_t previous = base_bytes_;
  base_bytes_ = bytes;
  base_scope_ = scope;
  return previous;
}

std::uint64_t BudgetBlocks::push(std::int64_t bytes, BudgetScope scope,
                                 std::thread::id thread) {
  for (const Block& b : innermost_blocks()) {
    DTR_CHECK(b.thread == thread || b.scope == scope,
              "[dtr] budget: another thread's budget block has a different "
              "scope; concurrent blocks must agree on it");
  }
  blocks_.push_back({++tokens_, thread, std::min(bytes, kUnlimited), scope});
  return tokens_;
}

void BudgetBlocks::pop(std::uint64_t token) {
  auto it = std::find_if(blocks_.begin(), blocks_.end(),
                         [&](const Block& b) { return b.token == token; });
  if (it == blocks_.end() && token <= tokens_before_fork_) return;
  DTR_CHECK(it != blocks_.end(), "[dtr] budget: block ", token,
            " is not active (ended twice?)");
  blocks_.erase(it);
}

BudgetBlocks BudgetBlocks::for_child(std::thread::id self,
                                     bool keep_blocks) const {
  BudgetBlocks child;
  child.base_bytes_ = base_bytes_;
  child.base_scope_ = base_scope_;
  child.tokens_ = tokens_;
  child.tokens_before_fork_ = tokens_;
  if (keep_blocks) {
    for (const Block& b : blocks_) {
      if (b.thread == self) child.blocks_.push_back(b);
    }
  }
  return child;
}

std::vector<BudgetBlocks::Block> BudgetBlocks::innermost_blocks() const {
  std::vector<Block> out;
  std::unordered_set<std::thread::id> seen;
  for (auto b = blocks_.rbegin(); b != blocks_.rend(); ++b) {
    if (seen.insert(b->thread).second) out.push_back(*b);
  }
  return out;
}

}  // namespace dtr::pt
