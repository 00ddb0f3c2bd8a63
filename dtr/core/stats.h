#pragma once
/// Exact telemetry of a runtime. Times are the runtime's clock (the sum of
/// operator costs it has charged), not wall time, but for the two `_wall_ns`
/// fields (steady_clock; they vary from run to run).
#include <cstdint>

namespace dtr {

struct RuntimeStats {
  /// 1 + model + remat compute so far. Starting at 1, as the reference
  /// does, keeps every access time positive, so an LRU score of 0 (which
  /// ends a search early) never occurs.
  std::int64_t clock_ns = 1;
  std::int64_t model_compute_ns = 0;  ///< first computations
  std::int64_t remat_compute_ns = 0;  ///< recomputations
  std::int64_t memory_bytes = 0;      ///< resident storage bytes now
  /// Maximum of memory_bytes, plus the workspace of an op the runtime ran
  /// or replayed itself (Note [Workspace]).
  std::int64_t peak_bytes = 0;
  std::int64_t constant_bytes = 0;  ///< bytes of constants added
  /// Largest outputs + workspace + inputs of an op.
  std::int64_t bottleneck_bytes = 0;
  std::uint64_t ops = 0;                 ///< operator calls recorded
  std::uint64_t remat_ops = 0;           ///< operator replays
  std::uint64_t evictions = 0;           ///< chosen by the heuristic
  std::uint64_t eager_evictions = 0;     ///< on release (eager policy)
  std::uint64_t banishments = 0;         ///< freed for good (banish policy)
  std::uint64_t forgotten_storages = 0;  ///< freed for good by forget()
  std::uint64_t eviction_searches = 0;   ///< calls into Heuristic::choose
  /// Wall time in Heuristic::choose: the cost of choosing victims.
  std::int64_t choose_wall_ns = 0;
  /// Wall time in Executor::replay (0 without an Executor, as in the
  /// simulator): the cost of recomputing. A replay that makes room (the
  /// LibTorch layer's allocations) includes that choice time too.
  std::int64_t replay_wall_ns = 0;
};

}  // namespace dtr
