#pragma once
// Programs shared by the runtime benchmarks (runtime_bench.cpp,
// profile_bench.cpp), so that their figures measure the same work.
#include <vector>

#include "dtr/core/runtime.h"

namespace dtr::bench {

/// A chain of `n` 64-byte ops from an 8-byte constant, each input released
/// as soon as its successor exists: per-op bookkeeping with no heuristic
/// eviction at an unlimited budget.
inline void record_chain(Runtime& rt, int n) {
  TensorId t = rt.add_constant(8);
  OutputSpec out{64, -1};
  for (int i = 0; i < n; ++i) {
    TensorId next = rt.call("f", std::vector<TensorId>{t}, {&out, 1}, 1)[0];
    if (i) rt.release(t);
    t = next;
  }
}

/// Budget for a constant and `pool` resident 64-byte values: with it, every
/// further 64-byte op evicts exactly one storage.
inline std::int64_t pool_budget(int pool) {
  return 8 + 64LL * pool;
}

/// Fills `rt` with `pool` independent resident values (costs 1..7) read from
/// one constant, which it returns; call_evicting_one() then evicts one each.
inline TensorId fill_pool(Runtime& rt, int pool) {
  TensorId x = rt.add_constant(8);
  OutputSpec out{64, -1};
  for (int i = 0; i < pool; ++i) {
    rt.call("f", std::vector<TensorId>{x}, {&out, 1}, 1 + i % 7);
  }
  return x;
}

/// One 64-byte op reading `x`: evicts one storage from a full pool.
inline TensorId call_evicting_one(Runtime& rt, TensorId x) {
  OutputSpec out{64, -1};
  return rt.call("g", std::vector<TensorId>{x}, {&out, 1}, 3)[0];
}

}  // namespace dtr::bench
