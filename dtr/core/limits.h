#pragma once
/// What dtr can count. Every sum of sizes and costs the runtime keeps (memory
/// in use, the clock, heuristic scores) is bounded by the totals below, so
/// none can overflow int64; input past them is rejected (OverflowError in the
/// runtime, TraceError naming file:line in the trace reader).
#include <cstdint>
#include <limits>

namespace dtr {

/// Bytes of all live storages together: 2^61 - 1 (about 2.3 exabytes).
/// Also the default budget, "unlimited": an unbounded run never runs out.
inline constexpr std::int64_t kMaxTotalBytes =
    std::numeric_limits<std::int64_t>::max() / 4;
/// Costs of all recorded ops together: 2^61 - 1 ns (about 73 years). The
/// quarter leaves room for a score's own cost plus its two neighbourhoods.
inline constexpr std::int64_t kMaxTotalCostNs =
    std::numeric_limits<std::int64_t>::max() / 4;

/// a + b, clamped to the int64 range (for statistics and scores, where a
/// saturated value still ranks correctly and must not be undefined).
inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max()
               : std::numeric_limits<std::int64_t>::min();
}

/// a * b for a, b >= 0, clamped to the int64 range.
inline std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t product;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return std::numeric_limits<std::int64_t>::max();
}

}  // namespace dtr
