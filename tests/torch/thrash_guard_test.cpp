// Tests of ThrashGuard (dtr/torch/thrash_guard.h): the remat limit each
// step gets, the one warning when no limit is set, and the messages.
#include "dtr/torch/thrash_guard.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace {

using dtr::pt::ThrashGuard;
constexpr std::int64_t kMs = 1'000'000;
const double kInf = std::numeric_limits<double>::infinity();

TEST(ThrashGuardTest, NoLimitByDefaultAndOnlyPositiveRatiosAreLimits) {
  ThrashGuard guard;
  EXPECT_FALSE(guard.limited());
  EXPECT_EQ(guard.remat_limit_ns(0), -1);
  EXPECT_THROW(guard.set_limit(0), dtr::InvalidArgument);
  EXPECT_THROW(guard.set_limit(-1), dtr::InvalidArgument);
  EXPECT_THROW(guard.set_limit(std::nan("")), dtr::InvalidArgument);
  EXPECT_EQ(guard.set_limit(2), kInf);
  EXPECT_TRUE(guard.limited());
  EXPECT_EQ(guard.set_limit(kInf), 2);
  EXPECT_FALSE(guard.limited());
}

// Step 1 computes 100 ms; step 2 begins with 30 ms recomputed in all.
TEST(ThrashGuardTest,
     AStepMayRecomputeTheLimitTimesItsOwnOrThePreviousCompute) {
  ThrashGuard guard;
  guard.set_limit(2);
  guard.step_boundary(0, 0);
  guard.step_boundary(100 * kMs, 30 * kMs);
  // Early in step 2, the previous step's 100 ms count: 30 + 2 * 100.
  EXPECT_EQ(guard.remat_limit_ns(120 * kMs), 230 * kMs);
  // Once step 2 has computed more (150 ms of its own), that counts.
  EXPECT_EQ(guard.remat_limit_ns(250 * kMs), 330 * kMs);
}

TEST(ThrashGuardTest, AShortStepMayAlwaysRecomputeTheFloor) {
  ThrashGuard guard;
  guard.set_limit(1);
  guard.step_boundary(0, 0);
  EXPECT_EQ(guard.remat_limit_ns(1), ThrashGuard::kFloorNs);
}

TEST(ThrashGuardTest, WarnsOnceWhenAStepRecomputesTenTimesItsOwnCompute) {
  ThrashGuard guard;
  guard.step_boundary(0, 0);
  EXPECT_FALSE(guard.step_boundary(20 * kMs, 150 * kMs));  // 7.5x
  EXPECT_TRUE(guard.step_boundary(40 * kMs, 400 * kMs));   // 12.5x
  EXPECT_NE(guard.warning().find("250 ms against 20.0 ms"), std::string::npos)
      << guard.warning();
  EXPECT_FALSE(guard.step_boundary(60 * kMs, 800 * kMs));  // once only
}

TEST(ThrashGuardTest, ALimitedRunIsNotWarnedAbout) {
  ThrashGuard guard;
  guard.set_limit(100);
  guard.step_boundary(0, 0);
  EXPECT_FALSE(guard.step_boundary(20 * kMs, 400 * kMs));
}

TEST(ThrashGuardTest, TheErrorNamesTheStepsTimesAndTheLimit) {
  ThrashGuard guard;
  guard.set_limit(2);
  guard.step_boundary(0, 0);
  guard.step_boundary(100 * kMs, 30 * kMs);
  const std::string op = "aten::mm";
  const std::string m = guard.explain(
      dtr::RematLimitExceeded(240 * kMs, 230 * kMs), 120 * kMs, &op);
  EXPECT_NE(m.find("thrashing in aten::mm: this step recomputed for 210 ms "
                   "against 100 ms of its own compute, past the thrash "
                   "limit of 2x"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("raise it"), std::string::npos) << m;
}

}  // namespace
