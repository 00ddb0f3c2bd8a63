#pragma once
/// Best-fit on one contiguous heap: the smallest free block that fits
/// (lowest address among equals) is split; a freed block merges with free
/// neighbours; with no hole large enough the heap grows at its top. The
/// reserved bytes are the heap's extent up to its last live block.
#include "dtr/sim/allocator/allocator_model.h"
#include "dtr/sim/allocator/block_space.h"

namespace dtr::sim {

class BestFitModel : public AllocatorModel {
 public:
  explicit BestFitModel(std::int64_t capacity) : capacity_(capacity) {}
  Placement place(std::int64_t bytes) override;
  void release(std::int64_t addr) override;
  std::int64_t reserved_bytes() const override;
  void check_invariants() const override { space_.check_invariants(); }

 private:
  std::int64_t capacity_;
  BlockSpace space_;
  bool started_ = false;  // the heap (region 0) exists
};

}  // namespace dtr::sim
