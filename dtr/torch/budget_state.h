#pragma once
/// The budget in force, the peak of DTR's bytes under it, and what an
/// out-of-memory error says about them (Note [The floor]). The Context
/// locks around it and hands the runtime what dtr_share() answers.
#include <cstdint>
#include <string>

#include "dtr/core/error.h"
#include "dtr/torch/budget_blocks.h"
#include "dtr/torch/dtr_torch.h"

namespace dtr::pt {

class BudgetState {
 public:
  /// What the user set; call apply() after changing it.
  BudgetBlocks& blocks() { return blocks_; }
  const BudgetBlocks& blocks() const { return blocks_; }
  /// Puts what the blocks say into force.
  void apply();
  /// The budget in force, and what it bounds (Note [What a budget bounds]).
  std::int64_t limit() const { return limit_; }
  BudgetScope scope() const { return scope_; }
  bool bounds_process() const { return scope_ == BudgetScope::kProcess; }
  /// The bytes DTR's own values may take when `outside` bytes live outside
  /// DTR: under a process scope the limit less those, else the limit.
  std::int64_t dtr_share(std::int64_t outside) const;

  void note_peak(std::int64_t dtr_bytes);
  std::int64_t peak() const { return peak_; }
  void reset_peak(std::int64_t dtr_bytes) { peak_ = dtr_bytes; }

  /// The message of `e`, raised while `op` ran (nullptr: outside an
  /// operator) with `held` bytes of held values resident.
  std::string explain(const OutOfMemory& e, std::int64_t held,
                      const std::string* op) const;

 private:
  BudgetBlocks blocks_;
  std::int64_t limit_ = kUnlimited;
  BudgetScope scope_ = BudgetScope::kCheckpointed;
  std::int64_t peak_ = 0;
};

}  // namespace dtr::pt
