#pragma once
// Invariant checks shared by the fuzz targets. A breach prints what broke
// and aborts: libFuzzer records the input as a crash. dtr's own checks throw
// InternalError (never abort), so it is turned into an abort here too.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"

namespace dtr::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "FUZZ INVARIANT BROKEN: %s\n", what.c_str());
  std::abort();
}

#define DTR_FUZZ_CHECK(cond, ...)                                        \
  do {                                                                   \
    if (!(cond)) {                                                       \
      ::dtr::fuzz::fail(::dtr::detail::concat(#cond ": ", __VA_ARGS__)); \
    }                                                                    \
  } while (0)

/// Sum of the bytes of resident storages, counted from the graph alone.
inline std::int64_t resident_bytes(const Graph& g) {
  std::int64_t sum = 0;
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    if (!g.storage(s).dead && g.storage(s).resident) sum += g.storage(s).bytes;
  }
  return sum;
}

/// The accounting matches the graph, the peak covers it, and the runtime's
/// own bookkeeping checks pass.
inline void check_accounting(const Runtime& rt) {
  const RuntimeStats& s = rt.stats();
  std::int64_t resident = resident_bytes(rt.graph());
  DTR_FUZZ_CHECK(resident == s.memory_bytes, "resident ", resident, " counted ",
                 s.memory_bytes);
  DTR_FUZZ_CHECK(s.peak_bytes >= s.memory_bytes, "peak ", s.peak_bytes,
                 " memory ", s.memory_bytes);
  try {
    rt.check_invariants();
  } catch (const InternalError& e) {
    fail(e.what());
  }
}

/// Every storage holds exactly the locks `expected` says (indexed by
/// storage id, missing = 0): after an error nothing is left locked.
inline void check_locks(const Graph& g,
                        const std::vector<std::uint32_t>& expected) {
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    std::uint32_t want = s < expected.size() ? expected[s] : 0;
    DTR_FUZZ_CHECK(g.storage(s).locks == want, "storage ", s, " has ",
                   g.storage(s).locks, " locks, expected ", want);
  }
}

}  // namespace dtr::fuzz
