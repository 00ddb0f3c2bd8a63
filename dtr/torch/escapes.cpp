#include "dtr/torch/escapes.h"

#include <cstdio>

namespace dtr::pt {

// Note [Escapes]
// An in-place op that writes checkpointed values into a plain tensor runs
// in place and returns that plain tensor, so what is computed from it stays
// outside DTR (docs/torch.md, "Escape hatch"). With grad mode off this is
// the optimizer or the engine updating parameters and their state, which
// is expected; with grad mode on it is model code (e.g. a plain
// torch::zeros state mutated by lstm_cell), so it is counted and reported
// once per operator.
void Escapes::note(const std::string& name, int count) {
  if (count == 0) return;
  count_ += static_cast<std::uint64_t>(count);
  if (warned_.insert(name).second) {
    std::fprintf(stderr,
                 "[dtr] warning: %s writes checkpointed values into a plain "
                 "tensor; it and what is computed from it stay outside the "
                 "budget (create it from a checkpointed tensor, e.g. "
                 "x.new_zeros(...), or checkpoint() it)\n",
                 name.c_str());
  }
}

}  // namespace dtr::pt
