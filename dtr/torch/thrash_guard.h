#pragma once
/// Note [Thrash limit]
/// Under a budget close to a program's floor, DTR can spend far more time
/// recomputing than computing: a truncated-BPTT LSTM at 0.3 of its peak
/// ran 76 times slower, for 580,000 evictions, before it met an operator
/// whose floor was above the budget. The results stay identical, so
/// nothing else tells the user that the budget is the cause.
///
/// A thrash limit L (set_thrash_limit) bounds each step's recomputation to
/// L times its own compute: the larger of what the step has computed so
/// far and the whole of the previous step, and never less than kFloorNs,
/// so the first replays of a short step cannot trip it. Passing it throws
/// ThrashLimitExceeded, which names both times and what to do. With no
/// limit (the default) a step that recomputed more than kWarnRatio times
/// its own compute is reported once, on stderr.
///
/// Times are the runtime's: an operator's measured cost, counted once per
/// first run (model compute) and once per replay (remat compute).
#include <cstdint>
#include <limits>
#include <string>

#include "dtr/core/error.h"

namespace dtr::pt {

class ThrashGuard {
 public:
  static constexpr double kWarnRatio = 10.0;
  static constexpr std::int64_t kFloorNs = 10'000'000;  // 10 ms

  /// `ratio` > 0 (infinity: no limit); returns the previous one. Throws
  /// dtr::InvalidArgument for 0, a negative number or NaN.
  double set_limit(double ratio);
  double limit() const { return limit_; }
  bool limited() const;

  /// A step boundary, with the runtime's totals now. True once, the first
  /// time a step ends having recomputed more than kWarnRatio times its
  /// own compute (and more than kFloorNs) with no limit set.
  bool step_boundary(std::int64_t model_ns, std::int64_t remat_ns);
  /// The runtime's remat limit (on its total remat compute) for the
  /// current step, when the step has computed up to total `model_ns`; -1
  /// when there is no limit.
  std::int64_t remat_limit_ns(std::int64_t model_ns) const;

  /// The message for `e`, met in `op` (nullptr: outside an operator).
  std::string explain(const RematLimitExceeded& e, std::int64_t model_ns,
                      const std::string* op) const;
  /// The warning step_boundary() asked for.
  std::string warning() const;

 private:
  /// The step's own compute as the limit counts it.
  std::int64_t own_ns(std::int64_t model_ns) const;

  double limit_ = std::numeric_limits<double>::infinity();
  bool warned_ = false;
  std::int64_t model_at_step_ = 0;  // totals when the current step began
  std::int64_t remat_at_step_ = 0;
  std::int64_t previous_model_ns_ = 0;  // own compute of the last step
  std::int64_t previous_remat_ns_ = 0;  // and its recomputation
};

}  // namespace dtr::pt
