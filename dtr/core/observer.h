#pragma once
/// A hook for profilers: the Runtime calls a RuntimeObserver, when one is
/// set (Runtime::set_observer), as operators run, replays start and end,
/// storages are evicted and resident bytes change. With none set each hook
/// costs one pointer test. Every hook receives the runtime's clock (the sum
/// of charged operator costs, stats().clock_ns); an observer that wants
/// wall time reads its own clock.
///
///   struct Printer : dtr::RuntimeObserver {
///     void on_evicted(const dtr::Graph& g, const dtr::EvictionEvent& e)
///         override { std::printf("evicted %u\n", e.storage); }
///   };
///   Printer p;
///   rt.set_observer(&p);   // not owned; nullptr turns profiling off
///
/// Nesting (Note [Observer nesting]): call() opens an operator span, and
/// every replay it causes opens and closes a replay span inside it, parents
/// inside the replays that need them. materialize() and begin_call() replay
/// outside any operator span: a frontend using the two-phase API opens its
/// own spans around its kernel. A replay that fails still closes its span
/// (`completed` false), so spans always balance. Hooks must not call back
/// into the Runtime, and must not throw.
#include <cstdint>
#include <span>

#include "dtr/core/graph.h"

namespace dtr {

/// One storage leaving memory.
struct EvictionEvent {
  StorageId storage = kNoId;
  std::int64_t bytes = 0;
  /// The heuristic's score of the victim when it was chosen; NaN for an
  /// eager eviction (its last handle dropped: no choice was made) and for
  /// an observer that wants no scores.
  double score = 0;
  bool eager = false;
  std::int64_t clock_ns = 0;
};

class RuntimeObserver {
 public:
  virtual ~RuntimeObserver() = default;
  /// call() starts: its inputs are about to be materialized.
  virtual void on_op_begin(std::int64_t /*clock_ns*/) {}
  /// call() ends: `op` was computed (`completed`), or the call failed and
  /// was discarded (`op` still names the record, not to be replayed).
  virtual void on_op_end(const Graph& /*graph*/, OpId /*op*/,
                         bool /*completed*/, std::int64_t /*clock_ns*/) {}
  /// The recomputation of evicted tensor `t` starts / ends.
  virtual void on_replay_begin(const Graph& /*graph*/, TensorId /*t*/,
                               std::int64_t /*clock_ns*/) {}
  virtual void on_replay_end(const Graph& /*graph*/, TensorId /*t*/,
                             bool /*completed*/, std::int64_t /*clock_ns*/) {}
  /// Whether on_evicted needs the victim's score: scoring it again costs
  /// metadata accesses (stats a run reports), so an observer that ignores
  /// scores says no and gets NaN.
  virtual bool wants_scores() const { return true; }
  /// A resident storage was evicted (its bytes are already subtracted).
  virtual void on_evicted(const Graph& /*graph*/,
                          const EvictionEvent& /*event*/) {}
  /// An operator (computed or replayed) wrote its outputs: the storages in
  /// `fresh` became resident, and `duplicate_bytes` went to outputs that
  /// already were (dropped again at once, after this hook). Sent before
  /// on_memory_changed, so an allocator model places them first.
  virtual void on_outputs_written(const Graph& /*graph*/,
                                  std::span<const StorageId> /*fresh*/,
                                  std::int64_t /*duplicate_bytes*/,
                                  std::int64_t /*clock_ns*/) {}
  /// Resident storage `s` left memory, evicted or freed for good.
  virtual void on_storage_freed(const Graph& /*graph*/, StorageId /*s*/,
                                std::int64_t /*clock_ns*/) {}
  /// Resident bytes (stats().memory_bytes) changed to `bytes`.
  virtual void on_memory_changed(std::int64_t /*bytes*/,
                                 std::int64_t /*clock_ns*/) {}
};

}  // namespace dtr
