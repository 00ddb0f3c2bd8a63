#include "dtr/torch/budget_state.h"

#include <algorithm>
#include <sstream>

namespace dtr::pt {

namespace {

// Note [The floor]: a lower bound, and a budget that fits.
std::string floor_hint(std::int64_t floor, BudgetScope scope) {
  const char* peak = scope == BudgetScope::kProcess ? "allocator_peak_bytes"
                                                    : "dtr_peak_bytes";
  return detail::concat(
      "The budget must be at least ", floor,
      " bytes (a lower bound: the floor of this operator, at this point; "
      "later operators may need more). The peak of a run without a budget "
      "(stats: ",
      peak, ") is a budget that fits; or reduce the batch");
}

}  // namespace

void BudgetState::apply() {
  const BudgetBlocks::InForce now = blocks_.in_force();
  limit_ = now.bytes;
  scope_ = now.bytes >= kUnlimited ? BudgetScope::kCheckpointed : now.scope;
}

// Note [What a budget bounds]
// BudgetScope::kCheckpointed (the default) bounds the storage of
// checkpointed values: activations, their gradients, whatever the model
// computes from checkpointed inputs. Parameters, their (plain) gradients,
// optimizer state and the input batch are outside it (`outside_bytes`).
// BudgetScope::kProcess bounds every byte the device's allocator holds:
// before each allocation, inside the kernel or not, DTR evicts until
// everything live plus the new allocation fits, i.e. its own share is the
// limit minus what lives outside it at that moment.
std::int64_t BudgetState::dtr_share(std::int64_t outside) const {
  if (!bounds_process()) return limit_;
  return std::max<std::int64_t>(limit_ - outside, 0);
}

void BudgetState::note_peak(std::int64_t dtr_bytes) {
  peak_ = std::max(peak_, dtr_bytes);
}

// Note [The floor]
// Out of memory means the values that cannot be evicted right now, plus
// what the operator is allocating, exceed the budget: a floor of this
// program, not bad luck of the heuristic. Say how big it is and what it
// is made of, so the user knows which budget would work. It is the floor
// of the operator that failed, at the moment it failed: a lower bound on
// the program's, since operators that have not run yet may need more: a
// budget raised to exactly this floor can fail again at a later operator.
// So the hint says it is a lower bound, and names the budget known to
// fit: the peak of a run without one.
std::string BudgetState::explain(const OutOfMemory& e, std::int64_t held,
                                 const std::string* op) const {
  // The runtime threw with nothing evictable left: what is in use now
  // cannot go, and the operator still needs `needed` on top of it.
  const std::int64_t unevictable = e.used_bytes();
  const std::int64_t floor = unevictable + e.needed_bytes();
  const std::int64_t outside = bounds_process() ? limit_ - e.budget_bytes() : 0;
  std::ostringstream out;
  out << "[dtr] out of memory" << (op != nullptr ? " in " + *op : "");
  if (!e.rematerializing().empty()) {
    out << " while recomputing " << (op != nullptr ? "its inputs" : "a value")
        << " (" << e.rematerializing() << ")";
  }
  out << ": the budget of " << (bounds_process() ? limit_ : e.budget_bytes())
      << " bytes is below this program's floor of at least " << floor + outside
      << " bytes (" << e.needed_bytes()
      << " for this operator's outputs and temporaries, " << held
      << " held: values the program keeps, optimizer state and inputs, "
      << std::max<std::int64_t>(unevictable - held, 0)
      << " locked: the operator's inputs";
  if (bounds_process()) {
    out << ", " << outside
        << " outside DTR: parameters, gradients, optimizer state";
  }
  out << "; " << e.evictable_bytes() << " bytes were evicted for it). "
      << floor_hint(floor + outside, scope_);
  return out.str();
}

}  // namespace dtr::pt
