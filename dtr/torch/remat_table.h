#pragma once
/// The live Remat of each operator, by the runtime's op id. Op ids are
/// dense and recycled (Graph), so a vector indexed by them replaces a hash
/// map that allocated a node on every call (Note [Inline call records]).
#include <vector>

#include "dtr/core/graph.h"

namespace dtr::pt {

struct Remat;

class RematTable {
 public:
  Remat* find(OpId op) const {
    return op < slots_.size() ? slots_[op] : nullptr;
  }
  bool contains(OpId op) const { return find(op) != nullptr; }
  void set(OpId op, Remat* remat) {
    if (op >= slots_.size()) slots_.resize(op + 1, nullptr);
    slots_[op] = remat;
  }
  /// Clears the slot only if it still names `remat`: the id may have been
  /// recycled for a newer call by the time an old Remat dies.
  void erase(OpId op, const Remat* remat) {
    if (op < slots_.size() && slots_[op] == remat) slots_[op] = nullptr;
  }
  template <typename F>
  void for_each(F&& f) const {
    for (Remat* r : slots_) {
      if (r != nullptr) f(*r);
    }
  }

 private:
  std::vector<Remat*> slots_;
};

}  // namespace dtr::pt
