// Tests of the fidelity and speed tables (dtr/report/fidelity_markdown.h) on
// hand-made cells: the counts, the marks of a cell (plain, `(~)`, bold) and
// the medians are written out by hand, not produced by the code.
#include "dtr/report/fidelity_markdown.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dtr::report {
namespace {

// A cell where ours and the reference agree in every counter.
FidelityCell identical(const std::string& trace, const std::string& h,
                       double ratio, double overhead) {
  FidelityCell c;
  c.reference.trace = trace;
  c.reference.heuristic = h;
  c.reference.budget_ratio = ratio;
  c.reference.status = "ok";
  c.reference.overhead = overhead;
  c.reference.model_compute_ns = 100;
  c.reference.remat_compute_ns = 7;
  c.reference.evictions = 3;
  c.reference.trace_ops = 1000;
  c.reference.cpu_s = 1.0;  // 1,000 ops/s
  c.ours.status = sim::SimStatus::kOk;
  c.ours.overhead = overhead;
  c.ours.model_compute_ns = 100;
  c.ours.remat_compute_ns = 7;
  c.ours.evictions = 3;
  c.ours.trace_ops = 1000;
  c.ours.sim_wall_ns = 1'000'000;  // 1 ms: 1,000,000 ops/s
  c.same_budget = true;
  c.agrees = true;
  return c;
}

const FidelitySource kSource{"ref.csv", "traces/", 0.02};

TEST(FidelityMarkdownTest, CountsAndMarksEachKindOfCell) {
  std::vector<FidelityCell> cells = {identical("lstm", "dtr", 0.5, 1.25),
                                     identical("lstm", "dtr", 0.4, 1.5),
                                     identical("lstm", "lru", 0.5, 2.0)};
  cells[1].ours.remat_compute_ns = 8;  // agrees, but not identical
  cells[2].agrees = false;             // a disagreement
  cells[2].ours.overhead = 2.5;
  cells[2].ours.remat_compute_ns = 150;
  const std::string md = fidelity_markdown(cells, kSource);
  EXPECT_NE(md.find("- cells compared: 3\n"), std::string::npos) << md;
  EXPECT_NE(md.find("within tolerance: 2 (66.7%)"), std::string::npos) << md;
  EXPECT_NE(md.find("eager evictions): 1\n"), std::string::npos) << md;
  EXPECT_NE(md.find("--reference ref.csv --traces traces/"), std::string::npos);
  EXPECT_NE(md.find("(tolerance 2%"), std::string::npos) << md;
  // Ratios in falling order; one row per heuristic.
  EXPECT_NE(md.find("| heuristic | 0.5 | 0.4 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| dtr | 1.2500 | 1.5000 (~) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| lru | **2.5000 vs 2.0000** |  |"), std::string::npos)
      << md;
  // The list of cells not identical names both, not the identical one.
  EXPECT_NE(md.find("| lstm | dtr | 0.4 | ok 1.5000, model 100 ns, remat 8 ns"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("| lstm | dtr | 0.5 | ok"), std::string::npos) << md;
}

TEST(FidelityMarkdownTest, FailedRunsShowTheirStatus) {
  std::vector<FidelityCell> cells = {identical("unet", "msps", 0.3, 0)};
  cells[0].ours.status = sim::SimStatus::kOom;
  cells[0].reference.status = "ok";
  cells[0].reference.overhead = 1.75;
  cells[0].agrees = false;
  const std::string md = fidelity_markdown(cells, kSource);
  EXPECT_NE(md.find("**oom vs 1.7500**"), std::string::npos) << md;
}

TEST(FidelityMarkdownTest, SpeedTableTakesMediansPerTraceAndHeuristic) {
  std::vector<FidelityCell> cells = {identical("lstm-trace", "dtr", 0.5, 1),
                                     identical("lstm-trace", "dtr", 0.4, 1),
                                     identical("lstm-trace", "dtr", 0.3, 1)};
  cells[1].ours.sim_wall_ns = 500'000;    // 2,000,000 ops/s: 2000x
  cells[2].ours.sim_wall_ns = 4'000'000;  // 250,000 ops/s: 250x
  const std::string md = speed_markdown(cells, kSource, 2);
  EXPECT_NE(md.find("(2 runs in parallel"), std::string::npos) << md;
  // The trace name is cut at its first '-'; median 1000x, minimum 250x.
  EXPECT_NE(md.find("| lstm | dtr | 1000 | 1000000 | 1000x | 250x |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| dtr | 1000x |"), std::string::npos) << md;
  EXPECT_NE(md.find("Overall: median speedup 1000x, minimum 250x, 1 of 3 "
                    "cells below 300x"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("--repeats"), std::string::npos) << md;
  FidelitySource repeated = kSource;
  repeated.repeats = 5;
  const std::string md5 = speed_markdown(cells, repeated, 2);
  EXPECT_NE(md5.find("--repeats 5"), std::string::npos) << md5;
  EXPECT_NE(md5.find("simulated 5 times"), std::string::npos) << md5;
}

}  // namespace
}  // namespace dtr::report
