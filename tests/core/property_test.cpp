// Differential property harness: random programs x every heuristic x every
// deallocation policy x several budgets, checking the invariants DTR must
// keep whatever it decides.
#include <gtest/gtest.h>

#include "dtr/core/heuristic.h"
#include "support/checked_run.h"

namespace dtr::testing {
namespace {

struct Case {
  Shape shape;
  std::string heuristic;
  DeallocPolicy policy;
};

class PropertyTest : public ::testing::TestWithParam<Case> {};

TEST_P(PropertyTest, InvariantsHoldAtEveryBudget) {
  const Case& c = GetParam();
  int evicting_runs = 0;  // finished with at least one eviction
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    RandomProgram p = make_random_program(c.shape, 12, seed);
    RuntimeOptions unbounded;
    unbounded.policy = c.policy;
    CheckedOutcome base = run_checked(p, unbounded, c.heuristic);
    ASSERT_FALSE(base.oom);
    ASSERT_EQ(base.stats.remat_compute_ns, 0);
    for (double ratio : {0.9, 0.7, 0.5, 0.35, 0.2}) {
      SCOPED_TRACE(std::string(shape_name(c.shape)) + " seed " +
                   std::to_string(seed) + " ratio " + std::to_string(ratio));
      RuntimeOptions o;
      o.policy = c.policy;
      o.seed = seed;
      o.budget_bytes = static_cast<std::int64_t>(ratio * base.stats.peak_bytes);
      CheckedOutcome run = run_checked(p, o, c.heuristic);
      if (!run.oom) {
        evicting_runs += run.stats.evictions > 0;
        // Same outputs, never cheaper than the unbounded run.
        EXPECT_EQ(run.outputs, base.outputs);
        EXPECT_EQ(run.stats.model_compute_ns, base.stats.model_compute_ns);
        EXPECT_GE(run.stats.clock_ns, base.stats.clock_ns);
      }
      // Determinism: the same configuration gives the same run, whether the
      // victim comes from the index or from the fast scan (each checked
      // against the reference scan at every choice).
      CheckedOutcome again =
          run_checked(p, o, c.heuristic, false, ChoiceMode::kCheckFastScan);
      EXPECT_EQ(again.oom, run.oom);
      EXPECT_EQ(again.stats.clock_ns, run.stats.clock_ns);
      EXPECT_EQ(again.stats.evictions, run.stats.evictions);
      EXPECT_EQ(again.stats.peak_bytes, run.stats.peak_bytes);
      // After an out-of-memory the runtime is still usable: raising the
      // budget lets the same program finish with the right outputs.
      if (run.oom) {
        CheckedOutcome recovered = run_checked(p, o, c.heuristic, true);
        EXPECT_EQ(recovered.outputs, base.outputs);
      }
    }
  }
  // Not vacuous: the invariants were checked on runs that evicted and
  // finished, not only on runs that stopped at out-of-memory. Found by this
  // guard: under the banish policy no budgeted run of a non-chain program
  // finishes. As designed (docs/architecture.md, "Policies"): a banished
  // storage pins every child, so memory fills; the paper's banishing
  // runtime reached only 0.9 of the peak on U-Net. The checks above then
  // cover out-of-memory and recovery only. Reported, not hidden.
  if (c.policy == DeallocPolicy::kBanish && evicting_runs == 0) {
    GTEST_SKIP() << "banish: every budgeted run ran out of memory";
  }
  EXPECT_GT(evicting_runs, 0);
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (Shape s :
       {Shape::kChain, Shape::kDiamond, Shape::kTree, Shape::kResidual}) {
    for (const auto& h : heuristic_names()) {
      for (DeallocPolicy p : {DeallocPolicy::kEager, DeallocPolicy::kIgnore,
                              DeallocPolicy::kBanish}) {
        cases.push_back({s, h, p});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllShapesHeuristicsPolicies, PropertyTest,
                         ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name =
                               std::string(shape_name(info.param.shape)) + "_" +
                               info.param.heuristic + "_" +
                               std::string(to_string(info.param.policy));
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

// The prototype's optimizations must not break the invariants either.
TEST(PropertyOptimizationsTest, SamplingAndSmallTensorFilterKeepInvariants) {
  RandomProgram p = make_random_program(Shape::kResidual, 20, 7);
  CheckedOutcome base = run_checked(p, RuntimeOptions{}, "dtr-eq");
  int finished = 0;
  for (double ratio : {0.9, 0.8, 0.6, 0.4}) {
    RuntimeOptions o;
    o.budget_bytes = static_cast<std::int64_t>(ratio * base.stats.peak_bytes);
    o.sample_sqrt = true;
    o.ignore_small = true;
    CheckedOutcome run = run_checked(p, o, "dtr-eq");
    if (!run.oom) {
      EXPECT_EQ(run.outputs, base.outputs);
      ++finished;
    }
  }
  EXPECT_GT(finished, 0);  // not vacuous
}

}  // namespace
}  // namespace dtr::testing
