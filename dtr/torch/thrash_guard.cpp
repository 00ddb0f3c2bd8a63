#include "dtr/torch/thrash_guard.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

namespace dtr::pt {

namespace {

// "18400 ms", "72.4 ms": milliseconds, with one decimal below 100.
std::string ms(std::int64_t ns) {
  const double v = static_cast<double>(ns) / 1e6;
  std::ostringstream out;
  out << std::fixed << std::setprecision(v < 100 ? 1 : 0) << v << " ms";
  return out.str();
}

}  // namespace

double ThrashGuard::set_limit(double ratio) {
  if (!(ratio > 0)) {  // NaN too
    throw InvalidArgument(detail::concat(
        "[dtr] set_thrash_limit: the limit is a ratio of a step's "
        "recomputation to its own compute and must be > 0 (infinity: no "
        "limit), got ",
        ratio));
  }
  const double previous = limit_;
  limit_ = ratio;
  return previous;
}

bool ThrashGuard::limited() const {
  return std::isfinite(limit_);
}

bool ThrashGuard::step_boundary(std::int64_t model_ns, std::int64_t remat_ns) {
  previous_model_ns_ = model_ns - model_at_step_;
  previous_remat_ns_ = remat_ns - remat_at_step_;
  model_at_step_ = model_ns;
  remat_at_step_ = remat_ns;
  if (warned_ || limited() || previous_remat_ns_ <= kFloorNs) return false;
  const double own =
      static_cast<double>(std::max<std::int64_t>(previous_model_ns_, 1));
  warned_ = static_cast<double>(previous_remat_ns_) > kWarnRatio * own;
  return warned_;
}

std::int64_t ThrashGuard::own_ns(std::int64_t model_ns) const {
  return std::max({model_ns - model_at_step_, previous_model_ns_, kFloorNs});
}

std::int64_t ThrashGuard::remat_limit_ns(std::int64_t model_ns) const {
  if (!limited()) return -1;
  const double allowed = limit_ * static_cast<double>(own_ns(model_ns));
  const double total = static_cast<double>(remat_at_step_) + allowed;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  return total >= static_cast<double>(kMax) ? kMax
                                            : static_cast<std::int64_t>(total);
}

std::string ThrashGuard::explain(const RematLimitExceeded& e,
                                 std::int64_t model_ns,
                                 const std::string* op) const {
  std::ostringstream out;
  out << "[dtr] thrashing" << (op != nullptr ? " in " + *op : "")
      << ": this step recomputed for "
      << ms(e.remat_compute_ns() - remat_at_step_) << " against "
      << ms(own_ns(model_ns))
      << " of its own compute, past the thrash limit of " << limit_
      << "x (dtr.set_thrash_limit, dtr train --thrash-limit). The budget is "
         "too close to this "
         "program's floor to run at a useful speed: raise it (the peak of a "
         "run without one, stats: dtr_peak_bytes, is a budget that fits), "
         "reduce the batch, or raise the limit";
  return out.str();
}

std::string ThrashGuard::warning() const {
  std::ostringstream out;
  out << "[dtr] warning: a step recomputed for " << ms(previous_remat_ns_)
      << " against " << ms(previous_model_ns_)
      << " of its own compute: the budget is close to this program's "
         "floor, and a higher one runs faster. dtr.set_thrash_limit(R) makes "
         "a step that recomputes more than R times its own compute an "
         "error instead (this warning is printed once)";
  return out.str();
}

}  // namespace dtr::pt
