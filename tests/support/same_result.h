#pragma once
// Compares two simulated runs field by field, for tests that expect one
// configuration change (a repeated run, an observer) to change nothing.
#include <gtest/gtest.h>

#include "dtr/sim/simulator.h"

namespace dtr::testing {

/// Everything a run reports except its wall time and its allocator
/// figures (those differ between allocator models by design).
inline void expect_same_result(const sim::SimResult& a,
                               const sim::SimResult& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.heuristic, b.heuristic);
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.budget_ratio, b.budget_ratio);
  EXPECT_EQ(a.budget_bytes, b.budget_bytes);
  EXPECT_EQ(a.model_compute_ns, b.model_compute_ns);
  EXPECT_EQ(a.remat_compute_ns, b.remat_compute_ns);
  EXPECT_EQ(a.overhead, b.overhead);
  EXPECT_EQ(a.peak_bytes, b.peak_bytes);
  EXPECT_EQ(a.evictions, b.evictions);
  EXPECT_EQ(a.eager_evictions, b.eager_evictions);
  EXPECT_EQ(a.banishments, b.banishments);
  EXPECT_EQ(a.remats, b.remats);
  EXPECT_EQ(a.metadata_accesses, b.metadata_accesses);
  EXPECT_EQ(a.trace_ops, b.trace_ops);
  EXPECT_EQ(a.final_clock_ns, b.final_clock_ns);
  EXPECT_EQ(a.message, b.message);
}

}  // namespace dtr::testing
