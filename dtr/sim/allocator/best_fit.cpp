#include "dtr/sim/allocator/best_fit.h"

namespace dtr::sim {

BestFitModel::BestFitModel(std::int64_t capacity, bool fixed)
    : capacity_(capacity), fixed_(fixed) {
  if (fixed_ && capacity_ > 0) {
    space_.add_region(0, capacity_);
    started_ = true;
  }
}

AllocatorModel::Spot BestFitModel::place(std::int64_t bytes) {
  std::optional<Block> hole = space_.best_fit(bytes);
  if (!hole) {
    if (!started_) {
      space_.add_region(0, bytes);
      started_ = true;
    } else {
      // The top block, if free, becomes part of the grown one.
      const Block top = space_.last_block(0);
      space_.grow_region(0, top.free ? bytes - top.size : bytes);
    }
    hole = space_.best_fit(bytes);
  }
  space_.take(hole->addr, bytes, /*split=*/true);
  return {hole->addr, hole->addr + bytes <= capacity_};
}

void BestFitModel::release(std::int64_t addr) {
  space_.release(addr);
}

std::int64_t BestFitModel::reserved_bytes() const {
  if (!started_) return 0;
  if (fixed_) return space_.region_end(0);
  const Block top = space_.last_block(0);
  return space_.region_end(0) - (top.free ? top.size : 0);
}

}  // namespace dtr::sim
