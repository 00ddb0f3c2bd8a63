#pragma once
/// The DTR arena: every storage the runtime manages is placed, best fit, in
/// one region of exactly the budget, so the memory reserved is the budget
/// by construction. When no hole fits a request, the runtime evicts the
/// window this placement chooses: the cheapest run of adjacent blocks, each
/// free or evictable, spanning at least the request (a sliding window over
/// the address space, as in Coop), instead of the globally cheapest
/// storages, which may not be adjacent.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "dtr/core/placement.h"
#include "dtr/sim/allocator/best_fit.h"

namespace dtr::sim {

class Arena : public Placement {
 public:
  /// `check`: verify the layout after every change (tests).
  explicit Arena(std::int64_t capacity, bool check = false);

  bool fits(std::int64_t bytes) const override;
  bool choose_window(const Graph& graph, std::int64_t bytes,
                     const EvictionCost& cost,
                     std::vector<StorageId>& victims) override;
  void on_outputs_written(const Graph& graph, std::span<const StorageId> fresh,
                          std::int64_t duplicate_bytes) override;
  void on_storage_freed(const Graph& graph, StorageId s) override;

  std::int64_t live_bytes() const { return heap_.space().live_bytes(); }
  /// The arena's size, or more if a request had to be placed past it.
  std::int64_t reserved_peak_bytes() const { return reserved_peak_; }
  /// Requests no hole could take (the runtime makes room first: 0).
  std::uint64_t failures() const { return failures_; }

 private:
  static constexpr std::int64_t kNowhere = -1;
  std::int64_t place(std::int64_t bytes);
  void after_change();

  BestFitModel heap_;
  bool check_;
  std::vector<std::int64_t> addr_of_;                  // by storage
  std::unordered_map<std::int64_t, StorageId> owner_;  // by block address
  std::int64_t reserved_peak_ = 0;
  std::uint64_t failures_ = 0;
};

}  // namespace dtr::sim
