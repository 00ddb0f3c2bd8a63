#pragma once
/// Deterministic stand-in for the op times the paper's logger measured.
/// A kernel costs a launch floor plus a roofline term (its FLOPs at a fixed
/// rate or its memory traffic at a fixed bandwidth, whichever is slower);
/// a view (t, view, split, slice) costs a small metadata floor. A seeded
/// jitter (default ±5%) mimics measurement noise so that equal layers do
/// not tie exactly; the same seed always gives the same times.
///
///   CostModel cost(seed);
///   std::int64_t t = cost.kernel_ns(/*flops=*/2 * m * n * k,
///                                   /*bytes=*/4 * (m * k + k * n + m * n));
#include <cstdint>

#include "dtr/models/rng.h"

namespace dtr::models {

class CostModel {
 public:
  /// A GPU-like device: ~8 TFLOP/s, ~600 GB/s, 8 µs per kernel launch,
  /// 1.5 µs per view; `jitter_permille` = 50 means ±5%.
  explicit CostModel(std::uint64_t seed, int jitter_permille = 50);

  /// Every op (kernel or view) costs exactly `unit_ns`: the unit-cost model
  /// of the paper's theory (§3), used by the chain model.
  static CostModel unit(std::int64_t unit_ns);

  /// Time of a kernel doing `flops` floating-point operations and moving
  /// `bytes` bytes to or from memory.
  std::int64_t kernel_ns(std::int64_t flops, std::int64_t bytes);
  /// Time of an op that only creates a view (no data moved).
  std::int64_t view_ns();

 private:
  std::int64_t jittered(std::int64_t ns);

  SplitMix64 rng_;
  int jitter_permille_;
  std::int64_t unit_ns_ = 0;  // > 0: unit-cost model
};

}  // namespace dtr::models
