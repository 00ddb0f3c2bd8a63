#pragma once
/// Feeds a run's allocations to an AllocatorModel (a RuntimeObserver) and
/// measures what it reserves. Forwards every hook to an inner observer (a
/// profile), so the two can watch one run.
#include <cstdint>
#include <memory>
#include <vector>

#include "dtr/core/observer.h"
#include "dtr/sim/allocator/allocator_model.h"

namespace dtr::sim {

struct AllocatorStats {
  std::int64_t reserved_peak_bytes = 0;
  /// Live bytes when the reserved peak was first reached.
  std::int64_t live_at_reserved_peak = 0;
  /// Requests a real allocator of `capacity` bytes could not have placed.
  std::uint64_t failures = 0;
  std::int64_t first_failure_clock_ns = -1;  ///< -1: none
  std::int64_t first_failure_bytes = 0;
};

class AllocatorTracker : public RuntimeObserver {
 public:
  /// `inner` (not owned) may be null; `check`: verify the model's
  /// invariants (and reserved >= live) after every change, for tests.
  AllocatorTracker(std::unique_ptr<AllocatorModel> model,
                   RuntimeObserver* inner, bool check = false);

  const AllocatorStats& stats() const { return stats_; }
  const AllocatorModel& model() const { return *model_; }
  std::int64_t live_bytes() const { return live_; }

  void on_op_begin(std::int64_t clock_ns) override;
  void on_op_end(const Graph& g, OpId op, bool completed,
                 std::int64_t clock_ns) override;
  void on_replay_begin(const Graph& g, TensorId t,
                       std::int64_t clock_ns) override;
  void on_replay_end(const Graph& g, TensorId t, bool completed,
                     std::int64_t clock_ns) override;
  bool wants_scores() const override;
  void on_evicted(const Graph& g, const EvictionEvent& event) override;
  void on_outputs_written(const Graph& g, std::span<const StorageId> fresh,
                          std::int64_t duplicate_bytes,
                          std::int64_t clock_ns) override;
  void on_storage_freed(const Graph& g, StorageId s,
                        std::int64_t clock_ns) override;
  void on_memory_changed(std::int64_t bytes, std::int64_t clock_ns) override;

 private:
  static constexpr std::int64_t kNowhere = -1;
  std::int64_t place(std::int64_t bytes, std::int64_t clock_ns);
  void release(std::int64_t addr, std::int64_t bytes);
  void note_reserved();

  std::unique_ptr<AllocatorModel> model_;
  RuntimeObserver* inner_;
  bool check_;
  std::vector<std::int64_t> addr_of_;  // by storage id; kNowhere if none
  std::int64_t live_ = 0;
  AllocatorStats stats_;
};

}  // namespace dtr::sim
