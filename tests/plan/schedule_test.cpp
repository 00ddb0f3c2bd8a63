#include "dtr/plan/schedule.h"

#include <gtest/gtest.h>

#include "dtr/plan/stage_plan.h"
#include "plan/plan_fixtures.h"

namespace dtr::plan {
namespace {

using testing::TraceText;

// x (constant, 10 bytes) -> a -> b -> c, 100 bytes each; c is the output.
StaticGraph chain3() {
  return TraceText()
      .constant("x", 10)
      .call("fa", {"x"}, {{"a", 100}}, 1)
      .call("fb", {"a"}, {{"b", 100}}, 2)
      .call("fc", {"b"}, {{"c", 100}}, 4)
      .release("a")
      .release("b")
      .graph();
}

Schedule steps(std::vector<ScheduleStep> s) {
  Schedule out;
  out.steps = std::move(s);
  return out;
}

constexpr StepKind C = StepKind::kCompute;
constexpr StepKind F = StepKind::kFree;

TEST(ScheduleTest, GoodScheduleValidatesAndTheRuntimeAgrees) {
  StaticGraph g = chain3();
  Schedule s = steps({{C, 0}, {C, 1}, {F, 0}, {C, 2}, {F, 1}});
  Validation v = validate_schedule(g, s, 210);
  ASSERT_TRUE(v.ok) << v.problem;
  EXPECT_EQ(v.peak_bytes, 210);
  EXPECT_EQ(v.compute_ns, 7);
  Validation r = execute_on_runtime(g, s, 210);
  ASSERT_TRUE(r.ok) << r.problem;
  EXPECT_EQ(r.peak_bytes, 210);
  EXPECT_EQ(r.compute_ns, 7);
}

TEST(ScheduleTest, RecomputationIsChargedAgainByBoth) {
  StaticGraph g = chain3();
  // Frees a early, recomputes it (the runtime replays it: a remat).
  Schedule s = steps({{C, 0}, {F, 0}, {C, 0}, {C, 1}, {F, 0}, {C, 2}, {F, 1}});
  Validation v = validate_schedule(g, s, 210);
  Validation r = execute_on_runtime(g, s, 210);
  ASSERT_TRUE(v.ok) << v.problem;
  ASSERT_TRUE(r.ok) << r.problem;
  EXPECT_EQ(v.compute_ns, 8);
  EXPECT_EQ(r.compute_ns, 8);
  EXPECT_EQ(v.computations, 4u);
}

TEST(ScheduleTest, PeakOverBudgetIsCaught) {
  StaticGraph g = chain3();
  Schedule s = steps({{C, 0}, {C, 1}, {F, 0}, {C, 2}, {F, 1}});
  Validation v = validate_schedule(g, s, 209);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("over the budget of 209"), std::string::npos)
      << v.problem;
  EXPECT_FALSE(execute_on_runtime(g, s, 209).ok);
}

TEST(ScheduleTest, ReadingAFreedValueIsCaught) {
  StaticGraph g = chain3();
  Schedule s = steps({{C, 0}, {F, 0}, {C, 1}, {C, 2}});
  Validation v = validate_schedule(g, s, 1000);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("reads node 0, which is not in memory"),
            std::string::npos)
      << v.problem;
  // The runtime would silently recompute it: the check comes first.
  EXPECT_FALSE(execute_on_runtime(g, s, 1000).ok);
}

TEST(ScheduleTest, MissingOutputSkippedNodeAndBadFreesAreCaught) {
  StaticGraph g = chain3();
  struct Case {
    Schedule s;
    const char* problem;
  } cases[] = {
      {steps({{C, 0}, {C, 1}, {C, 2}, {F, 2}}), "not in memory at the end"},
      {steps({{C, 0}, {C, 1}, {F, 1}}), "node 2 ('fc') is never computed"},
      {steps({{C, 0}, {F, 1}}), "is freed but not resident"},
      {steps({{C, 0}, {C, 0}}), "is computed while resident"},
      {steps({{C, 7}}), "does not exist"},
  };
  for (const Case& c : cases) {
    Validation v = validate_schedule(g, c.s, 1000);
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.problem.find(c.problem), std::string::npos) << v.problem;
    EXPECT_FALSE(execute_on_runtime(g, c.s, 1000).ok) << c.problem;
  }
}

TEST(ScheduleTest, ConstantsAloneOverBudget) {
  Validation v = validate_schedule(chain3(), {}, 9);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("constants alone"), std::string::npos);
}

TEST(ScheduleTest, StagePlanFreesAfterLastReadAndKeepsOutputs) {
  StaticGraph g = chain3();
  StagePlan p =
      plan_with_keep_rule(g, [](NodeId, std::size_t) { return true; });
  Schedule s = schedule_from_stages(g, p);
  EXPECT_EQ(s.steps, (std::vector<ScheduleStep>{
                         {C, 0}, {C, 1}, {F, 0}, {C, 2}, {F, 1}}));
  EXPECT_EQ(s.stage_starts, (std::vector<std::size_t>{0, 1, 3}));
}

TEST(ScheduleTest, KeepingNothingRecomputesFromTheConstants) {
  StaticGraph g = chain3();
  StagePlan p =
      plan_with_keep_rule(g, [](NodeId, std::size_t) { return false; });
  Validation v = validate_schedule(g, schedule_from_stages(g, p), 1000);
  ASSERT_TRUE(v.ok) << v.problem;
  EXPECT_EQ(v.compute_ns, 1 + (1 + 2) + (1 + 2 + 4));
}

}  // namespace
}  // namespace dtr::plan
