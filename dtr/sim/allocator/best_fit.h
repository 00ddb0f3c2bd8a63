#pragma once
/// Best-fit on one contiguous heap: the smallest free block that fits
/// (lowest address among equals) is split; a freed block merges with free
/// neighbours; with no hole large enough the heap grows at its top. The
/// reserved bytes are the heap's extent up to its last live block. As an
/// arena (`fixed`) the heap is [0, capacity) from the start and reserves
/// all of it; it grows past it only for a request no hole can take.
#include "dtr/sim/allocator/allocator_model.h"
#include "dtr/sim/allocator/block_space.h"

namespace dtr::sim {

class BestFitModel : public AllocatorModel {
 public:
  explicit BestFitModel(std::int64_t capacity, bool fixed = false);
  Spot place(std::int64_t bytes) override;
  void release(std::int64_t addr) override;
  std::int64_t reserved_bytes() const override;
  void check_invariants() const override { space_.check_invariants(); }
  const BlockSpace& space() const { return space_; }
  /// Whether a hole of `bytes` is free within the heap.
  bool has_hole(std::int64_t bytes) const {
    return space_.best_fit(bytes).has_value();
  }

 private:
  std::int64_t capacity_;
  bool fixed_;
  BlockSpace space_;
  bool started_ = false;  // the heap (region 0) exists
};

}  // namespace dtr::sim
