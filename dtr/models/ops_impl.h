#pragma once
/// Helpers shared by the ops_*.cpp files; not part of the builders' API.
#include <cstdint>
#include <vector>

#include "dtr/models/tape.h"

namespace dtr::models::detail {

/// Time of an elementwise kernel over `n` elements touching `tensors`
/// float32 tensors of that size (reads plus writes), `flops_per_elem` each.
inline std::int64_t elementwise_ns(Tape& tape, std::int64_t n, int tensors,
                                   int flops_per_elem = 1) {
  return tape.cost().kernel_ns(flops_per_elem * n, 4 * n * tensors);
}

/// The gradients a BackwardFn returns: one per recorded input.
using Grads = std::vector<Var>;

/// Saves each of `vs` when `grad` (so inputs are saved before the CALL and
/// outputs after it, in the order the logger shows).
inline std::vector<Var> save_if(Tape& tape, bool grad,
                                const std::vector<Var>& vs) {
  std::vector<Var> saved;
  if (!grad) return saved;
  for (const Var& v : vs) saved.push_back(tape.save(v));
  return saved;
}

/// What a product a·b saves, in the logged build's order: a (which b's
/// gradient needs) then b (which a's gradient needs), each only if that
/// gradient is wanted. Returns {a or none, b or none}.
inline std::vector<Var> save_factors(Tape& tape, bool grad, const Var& a,
                                     const Var& b) {
  if (!grad) return {};
  return {b.requires_grad() ? tape.save(a) : Var(),
          a.requires_grad() ? tape.save(b) : Var()};
}

}  // namespace dtr::models::detail
