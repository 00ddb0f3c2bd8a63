#include "dtr/plan/run_recording.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/plan/milp.h"
#include "dtr/plan/planner.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "support/random_trace.h"

namespace dtr::plan {
namespace {

using dtr::testing::make_random_program;
using dtr::testing::Shape;

const char* const kHeuristics[] = {"dtr", "dtr-eq", "dtr-local",
                                   "lru", "msps",   "size"};
constexpr Shape kShapes[] = {Shape::kChain, Shape::kDiamond, Shape::kTree,
                             Shape::kResidual};

// One heuristic's run at a budget, and its plan when it trained.
struct RecordedRun {
  bool trained = false;
  std::int64_t compute_ns = 0;
  StagePlan plan;
};

RecordedRun record(const trace::Program& p, const StaticGraph& g,
                   const sim::Baseline& baseline, const std::string& heuristic,
                   std::int64_t budget) {
  RunRecorder recorder(p, g);
  sim::SimConfig config;
  config.heuristic = heuristic;
  config.budget_bytes = budget;
  config.thrash_limit = std::numeric_limits<double>::infinity();
  config.observer = &recorder;
  sim::SimResult s = sim::simulate(p, baseline, config);
  RecordedRun r;
  r.trained = s.status == sim::SimStatus::kOk;
  if (!r.trained) return r;
  EXPECT_TRUE(recorder.complete());
  r.compute_ns = s.model_compute_ns + s.remat_compute_ns;
  r.plan = recorder.plan();
  return r;
}

// The property of one memory model (Note [Static graph], Note [Runs as
// stage plans]): whenever a DTR heuristic trains at a budget, its run is a
// static plan within that budget that computes no more than the run did,
// so the MILP's model admits a schedule there.
TEST(RunRecordingTest, EveryRunThatTrainsIsAPlanWithinItsBudget) {
  int trained = 0;
  for (Shape shape : kShapes) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      trace::Program p = to_trace_program(make_random_program(shape, 6, seed));
      StaticGraph g = build_static_graph(p);
      sim::Baseline baseline = sim::compute_baseline(p);
      for (double ratio : {0.9, 0.7, 0.5, 0.4}) {
        const std::int64_t budget =
            sim::budget_for_ratio(ratio, baseline.peak_bytes);
        for (const char* h : kHeuristics) {
          RecordedRun run = record(p, g, baseline, h, budget);
          if (!run.trained) continue;
          ++trained;
          SCOPED_TRACE(std::string(dtr::testing::shape_name(shape)) + " seed " +
                       std::to_string(seed) + " ratio " +
                       std::to_string(ratio) + " " + h);
          Validation v =
              validate_schedule(g, schedule_from_stages(g, run.plan), budget);
          ASSERT_TRUE(v.ok) << v.problem;
          EXPECT_LE(v.compute_ns, run.compute_ns);
          Validation rt =
              execute_on_runtime(g, schedule_from_stages(g, run.plan), budget);
          EXPECT_TRUE(rt.ok) << rt.problem;
        }
      }
    }
  }
  EXPECT_GT(trained, 50);  // most cells of 288: the rest run out of memory
}

// Started from the runs, the MILP is never worse than the best heuristic
// that trains, and its bound is below what it returns.
TEST(RunRecordingTest, MilpStartedFromTheRunsIsNeverWorseThanThem) {
  if (!milp_available()) GTEST_SKIP() << "built without CBC";
  std::vector<trace::Program> programs;
  for (const char* spec : {"model:chain?depth=6", "model:chain?depth=10"}) {
    programs.push_back(sim::load_program(spec).program);
  }
  for (Shape shape : {Shape::kTree, Shape::kResidual}) {
    programs.push_back(to_trace_program(make_random_program(shape, 2, 7)));
  }
  int compared = 0;
  for (const trace::Program& p : programs) {
    StaticGraph g = build_static_graph(p);
    sim::Baseline baseline = sim::compute_baseline(p);
    for (double ratio : {0.9, 0.7, 0.5}) {
      const std::int64_t budget =
          sim::budget_for_ratio(ratio, baseline.peak_bytes);
      std::vector<NamedPlan> starts;
      std::int64_t best = std::numeric_limits<std::int64_t>::max();
      for (const char* h : kHeuristics) {
        RecordedRun run = record(p, g, baseline, h, budget);
        if (!run.trained) continue;
        best = std::min(best, run.compute_ns);
        starts.push_back({h, run.plan});
      }
      if (starts.empty()) continue;
      SCOPED_TRACE(p.source + " ratio " + std::to_string(ratio));
      PlanResult r = run_planner(g, {.planner = "milp",
                                     .budget_bytes = budget,
                                     .time_limit_s = 5,
                                     .starts = &starts});
      EXPECT_TRUE(r.consistent()) << r.validation.problem;
      ASSERT_TRUE(r.status == PlanStatus::kOptimal ||
                  r.status == PlanStatus::kFeasible)
          << to_string(r.status) << ": " << r.message;
      EXPECT_LE(r.compute_ns, best);
      EXPECT_LE(r.lower_bound_ns, static_cast<double>(r.compute_ns));
      ++compared;
    }
  }
  EXPECT_GE(compared, 4);
}

// The same property on the shipped recorded traces (up to 2,000 nodes,
// multi-output batch norm and convolution backward, views, many recompute
// stages).
TEST(RunRecordingTest, RecordedTraceRunsArePlansWithinTheirBudget) {
  int trained = 0;
  for (const char* name : {"mlp", "resnet32", "transformer", "unet"}) {
    trace::Program p = sim::load_program(std::string(DTR_DATA_DIR) +
                                         "/traces/" + name + ".log")
                           .program;
    StaticGraph g = build_static_graph(p);
    sim::Baseline baseline = sim::compute_baseline(p);
    for (double ratio : {0.6, 0.4}) {
      const std::int64_t budget =
          sim::budget_for_ratio(ratio, baseline.peak_bytes);
      for (const char* h : {"dtr-eq", "lru"}) {
        RecordedRun run = record(p, g, baseline, h, budget);
        if (!run.trained) continue;
        ++trained;
        SCOPED_TRACE(std::string(name) + " ratio " + std::to_string(ratio) +
                     " " + h);
        Schedule s = schedule_from_stages(g, run.plan);
        Validation v = validate_schedule(g, s, budget);
        ASSERT_TRUE(v.ok) << v.problem;
        EXPECT_LE(v.compute_ns, run.compute_ns);
        EXPECT_TRUE(execute_on_runtime(g, s, budget).ok);
      }
    }
  }
  EXPECT_GE(trained, 12);
}

TEST(RunRecordingTest, AStartWithMalformedStagesIsRefused) {
  StaticGraph g =
      build_static_graph(sim::load_program("model:chain?depth=3").program);
  StagePlan bad;
  bad.frontier = {0, 2};  // jumps over node 1
  bad.S.assign(2, std::vector<bool>(g.size(), false));
  bad.R = bad.S;
  std::vector<NamedPlan> starts{{"bad", bad}};
  try {
    run_planner(
        g, {.planner = "milp", .budget_bytes = 1 << 30, .starts = &starts});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("frontier jumps at stage 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(RunRecordingTest, AnIncompleteRunIsNoPlan) {
  trace::Program p = to_trace_program(make_random_program(Shape::kChain, 3, 1));
  StaticGraph g = build_static_graph(p);
  RunRecorder recorder(p, g);
  EXPECT_FALSE(recorder.complete());
  EXPECT_THROW(recorder.plan(), InvalidArgument);
}

}  // namespace
}  // namespace dtr::plan
