#pragma once
/// The wall-clock deadline of one planner call, taken when the call starts
/// and checked by each of its stages (the MIP start, building the model,
/// the solve), so that the time limit bounds the whole call.
///
///   dtr::plan::Deadline d(config.time_limit_s);
///   if (d.passed()) return time_limit_status();
///   solver.set_seconds(d.seconds_left());
#include <chrono>

namespace dtr::plan {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  /// `seconds` from now; must be positive and finite (run_planner checks).
  explicit Deadline(double seconds)
      : end_(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(seconds))) {}

  bool passed() const { return Clock::now() >= end_; }

  /// Seconds until the deadline, 0 once it has passed.
  double seconds_left() const {
    double left = std::chrono::duration<double>(end_ - Clock::now()).count();
    return left > 0 ? left : 0;
  }

 private:
  Clock::time_point end_;
};

}  // namespace dtr::plan
