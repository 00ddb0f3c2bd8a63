// The property harness (tests/support/checked_run.h) with an allocator
// model watching: random programs x heuristics x policies x budgets, the
// model checking its layout at every change (no overlapping or stray live
// blocks, free neighbours merged, reserved >= live, live = the runtime's
// resident bytes), and the run the same as without it.
#include <gtest/gtest.h>

#include <string>

#include "dtr/sim/allocator/allocator_model.h"
#include "dtr/sim/allocator/allocator_tracker.h"
#include "support/checked_run.h"

namespace dtr::testing {
namespace {

void check_watched_runs(Shape shape, const std::string& heuristic,
                        DeallocPolicy policy, sim::AllocatorKind kind) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    RandomProgram p = make_random_program(shape, 12, seed);
    RuntimeOptions unbounded;
    unbounded.policy = policy;
    const CheckedOutcome base = run_checked(p, unbounded, heuristic);
    for (double ratio : {0.9, 0.6, 0.35}) {
      SCOPED_TRACE(std::string(shape_name(shape)) + " seed " +
                   std::to_string(seed) + " ratio " + std::to_string(ratio));
      RuntimeOptions o = unbounded;
      o.seed = seed;
      o.budget_bytes = static_cast<std::int64_t>(ratio * base.stats.peak_bytes);
      const CheckedOutcome plain = run_checked(p, o, heuristic);
      sim::AllocatorTracker tracker(
          sim::make_allocator_model(kind, o.budget_bytes), nullptr,
          /*check=*/true);
      CheckedOutcome watched;
      ASSERT_NO_THROW(watched = run_checked(p, o, heuristic, false,
                                            ChoiceMode::kCheck, &tracker));
      EXPECT_EQ(watched.oom, plain.oom);
      EXPECT_EQ(watched.outputs, plain.outputs);
      EXPECT_EQ(watched.stats.clock_ns, plain.stats.clock_ns);
      EXPECT_EQ(watched.stats.evictions, plain.stats.evictions);
      EXPECT_EQ(watched.stats.peak_bytes, plain.stats.peak_bytes);
      EXPECT_EQ(tracker.live_bytes(), watched.stats.memory_bytes);
      EXPECT_GE(tracker.stats().reserved_peak_bytes, watched.stats.peak_bytes);
    }
  }
}

TEST(AllocatorPropertyTest, ModelsKeepTheirInvariantsOnRandomPrograms) {
  for (Shape shape :
       {Shape::kChain, Shape::kDiamond, Shape::kTree, Shape::kResidual}) {
    for (const char* heuristic : {"dtr", "lru", "size"}) {
      for (DeallocPolicy policy :
           {DeallocPolicy::kEager, DeallocPolicy::kIgnore,
            DeallocPolicy::kBanish}) {
        for (sim::AllocatorKind kind :
             {sim::AllocatorKind::kBestFit, sim::AllocatorKind::kCaching}) {
          SCOPED_TRACE(std::string(heuristic) + "/" +
                       std::string(to_string(policy)) + " " +
                       std::string(sim::to_string(kind)));
          check_watched_runs(shape, heuristic, policy, kind);
        }
      }
    }
  }
}

}  // namespace
}  // namespace dtr::testing
