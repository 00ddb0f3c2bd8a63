#pragma once
/// The budget the user set (Note [Concurrent budgets]): a base, set by
/// set_budget(), and scoped blocks (dtr::pt::Budget, Python's `with
/// dtr.budget(n)`) on any number of threads, each identified by a token.
/// Bookkeeping only: the Context locks around it and applies what
/// in_force() answers to the runtime.
#include <cstdint>
#include <thread>
#include <vector>

#include "dtr/torch/dtr_torch.h"

namespace dtr::pt {

class BudgetBlocks {
 public:
  struct InForce {
    std::int64_t bytes = kUnlimited;
    BudgetScope scope = BudgetScope::kCheckpointed;
  };
  /// The budget now: with no block active, the base; else the sum over
  /// threads of each thread's innermost block, in the newest block's scope.
  InForce in_force() const;
  /// Sets `thread`'s innermost block, or the base when it has none;
  /// returns the bytes it replaces.
  std::int64_t set(std::int64_t bytes, BudgetScope scope,
                   std::thread::id thread);
  /// Begins a block; throws dtr::Error if another thread's innermost block
  /// has another scope (concurrent blocks must agree on it).
  std::uint64_t push(std::int64_t bytes, BudgetScope scope,
                     std::thread::id thread);
  /// Ends a block, whichever thread began it and in any order; throws
  /// dtr::Error for a token that is not active, unless it was given out
  /// before fork() (its block stayed with the parent: Note [Fork]).
  void pop(std::uint64_t token);
  /// What a child of fork() keeps: the base and, if `keep_blocks` (the
  /// parent's state was consistent), the blocks of the forking thread.
  BudgetBlocks for_child(std::thread::id self, bool keep_blocks) const;

 private:
  struct Block {
    std::uint64_t token;
    std::thread::id thread;
    std::int64_t bytes;
    BudgetScope scope;
  };
  std::vector<Block> innermost_blocks() const;

  std::int64_t base_bytes_ = kUnlimited;
  BudgetScope base_scope_ = BudgetScope::kCheckpointed;
  std::vector<Block> blocks_;  // active, in push order
  std::uint64_t tokens_ = 0;
  std::uint64_t tokens_before_fork_ = 0;
};

}  // namespace dtr::pt
