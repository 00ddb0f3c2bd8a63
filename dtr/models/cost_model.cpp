#include "dtr/models/cost_model.h"

#include <algorithm>

namespace dtr::models {

namespace {
// Roughly a V100 running fp32 under the prototype's synchronous logging,
// calibrated against the shipped traces: tiny kernels take 10-30 µs there,
// a 180 MB relu about 600 µs, views 1-4 µs.
constexpr std::int64_t kFlopsPerNs = 8000;  // 8 TFLOP/s
constexpr std::int64_t kBytesPerNs = 600;   // 600 GB/s
constexpr std::int64_t kLaunchNs = 8000;
constexpr std::int64_t kViewNs = 1500;
}  // namespace

CostModel::CostModel(std::uint64_t seed, int jitter_permille)
    : rng_(seed), jitter_permille_(std::clamp(jitter_permille, 0, 500)) {}

CostModel CostModel::unit(std::int64_t unit_ns) {
  CostModel m(0, 0);
  m.unit_ns_ = std::max<std::int64_t>(unit_ns, 1);
  return m;
}

std::int64_t CostModel::jittered(std::int64_t ns) {
  if (jitter_permille_ == 0) return ns;
  const auto span = static_cast<std::uint64_t>(2 * jitter_permille_ + 1);
  const auto offset =
      static_cast<std::int64_t>(rng_.below(span)) - jitter_permille_;
  return std::max<std::int64_t>(1, ns + ns * offset / 1000);
}

std::int64_t CostModel::kernel_ns(std::int64_t flops, std::int64_t bytes) {
  if (unit_ns_ > 0) return unit_ns_;
  const std::int64_t roofline =
      std::max(flops / kFlopsPerNs, bytes / kBytesPerNs);
  return jittered(kLaunchNs + roofline);
}

std::int64_t CostModel::view_ns() {
  if (unit_ns_ > 0) return unit_ns_;
  return jittered(kViewNs);
}

}  // namespace dtr::models
