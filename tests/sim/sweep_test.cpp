// Tests of run_sweep (dtr/sim/sweep.h): the grid it runs and the order of
// its cells, the outcome of each cell on the hand-checked traces A and C
// (tests/support/small_traces.h), progress reports, results.csv (written by
// report::write_sweep), and the bad requests it rejects before simulating
// anything. That the cells do not depend on the number of threads is checked
// end to end by CliTest.SweepResultsDoNotDependOnTheNumberOfThreads.
#include "dtr/sim/sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/report/result_table.h"
#include "dtr/report/sweep_report.h"
#include "support/small_traces.h"
#include "support/temp_dir.h"

namespace dtr::sim {
namespace {

using dtr::testing::TempDir;

// What the traces' comments derive for each ratio: the budget,
// floor(ratio * baseline peak), and the outcome. A result reports the
// budget_ratio it ran at, budget / baseline peak (232 / 310 for 0.75).
struct Expected {
  std::string trace;
  double ratio;
  std::int64_t budget_bytes;
  SimStatus status;
  std::uint64_t remats;
};

const std::vector<double> kRatios = {1.0, 0.75, 0.5};
const std::vector<std::string> kHeuristics = {"dtr", "lru"};

// Trace A: peak 600, so 600, 450, 300; only the full peak fits.
// Trace C: peak 310, so 310, 232 (one replay of a) and 155 (under 220).
const std::vector<Expected> kExpected = {
    {"small_a", 1.0, 600, SimStatus::kOk, 0},
    {"small_a", 0.75, 450, SimStatus::kOom, 0},
    {"small_a", 0.5, 300, SimStatus::kOom, 0},
    {"small_c", 1.0, 310, SimStatus::kOk, 0},
    {"small_c", 0.75, 232, SimStatus::kOk, 1},
    {"small_c", 0.5, 155, SimStatus::kOom, 0},
};

const Expected& expected_cell(const std::string& trace, double ratio) {
  for (const Expected& e : kExpected) {
    if (e.trace == trace && e.ratio == ratio) return e;
  }
  throw std::logic_error("no expected cell for " + trace);
}

std::int64_t peak_of(const std::string& trace) {
  return trace == "small_a" ? 600 : 310;
}

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_a_ = dir_.write("small_a.log", small_traces::trace_a_text());
    trace_c_ = dir_.write("small_c.log", small_traces::trace_c_text());
  }

  SweepRequest request(int threads = 2) const {
    SweepRequest r;
    r.specs = {trace_a_, trace_c_};
    r.ratios = kRatios;
    r.heuristics = kHeuristics;
    r.threads = threads;
    return r;
  }

  // Expects run_sweep to throw E with every fragment in its message, and
  // to report no cell before it does.
  template <typename E>
  void expect_rejected(const SweepRequest& r,
                       const std::vector<std::string>& fragments) {
    std::size_t reported = 0;
    try {
      run_sweep(
          r, [&](const SweepCell&, std::size_t, std::size_t) { ++reported; });
      ADD_FAILURE() << "no exception";
    } catch (const E& e) {
      for (const auto& f : fragments) {
        EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
            << "'" << f << "' not in: " << e.what();
      }
    }
    EXPECT_EQ(reported, 0u) << "cells were simulated before the error";
  }

  TempDir dir_;
  std::string trace_a_, trace_c_;
};

TEST_F(SweepTest, CellsFollowTheGridTracesThenHeuristicsThenRatios) {
  SweepOutput out = run_sweep(request());
  ASSERT_EQ(out.cells.size(), 2u * kHeuristics.size() * kRatios.size());
  std::size_t i = 0;
  for (const std::string trace : {"small_a", "small_c"}) {
    for (const auto& h : kHeuristics) {
      for (double ratio : kRatios) {
        SCOPED_TRACE("cell " + std::to_string(i));
        const SweepCell& c = out.cells[i++];
        const Expected& e = expected_cell(trace, ratio);
        EXPECT_EQ(c.trace, trace);
        EXPECT_EQ(c.result.heuristic, h);
        EXPECT_EQ(c.result.budget_bytes, e.budget_bytes);
        EXPECT_DOUBLE_EQ(c.result.budget_ratio,
                         double(e.budget_bytes) / double(peak_of(trace)));
        EXPECT_EQ(c.result.policy, DeallocPolicy::kEager);
      }
    }
  }
  ASSERT_EQ(out.programs.size(), 2u);  // in the order of the specs
  EXPECT_EQ(out.programs[0].name, "small_a");
  EXPECT_EQ(out.programs[1].name, "small_c");
}

TEST_F(SweepTest, EveryCellHasTheOutcomeDerivedByHand) {
  SweepOutput out = run_sweep(request());
  ASSERT_EQ(out.cells.size(), 12u);
  for (const SweepCell& c : out.cells) {
    SCOPED_TRACE(c.trace + " " + c.result.heuristic + " " +
                 std::to_string(c.result.budget_bytes));
    const Expected* e = nullptr;
    for (const Expected& x : kExpected) {
      if (x.trace == c.trace && x.budget_bytes == c.result.budget_bytes) e = &x;
    }
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(c.result.status, e->status) << c.result.message;
    EXPECT_EQ(c.result.baseline.peak_bytes, peak_of(c.trace));
    EXPECT_EQ(c.result.baseline.compute_ns, c.trace == "small_a" ? 60 : 40);
    if (e->status != SimStatus::kOk) {
      EXPECT_FALSE(c.result.message.empty());
      continue;
    }
    EXPECT_LE(c.result.peak_bytes, e->budget_bytes);
    EXPECT_EQ(c.result.remats, e->remats);
    EXPECT_EQ(c.result.remat_compute_ns, 10 * static_cast<int>(e->remats));
    EXPECT_DOUBLE_EQ(c.result.overhead, e->remats == 0 ? 1.0 : 50.0 / 40.0);
  }
}

TEST_F(SweepTest, ProgressReportsEveryCellOnceWithARunningCount) {
  std::vector<std::size_t> done_seen;
  std::set<std::tuple<std::string, std::string, double>> cells_seen;
  std::size_t total_seen = 0;
  SweepOutput out = run_sweep(
      request(), [&](const SweepCell& c, std::size_t done, std::size_t total) {
        done_seen.push_back(done);
        cells_seen.insert({c.trace, c.result.heuristic, c.result.budget_ratio});
        total_seen = total;
      });
  // Called under a lock: `done` counts 1, 2, ... in the order of the calls.
  std::vector<std::size_t> expected_done(12);
  for (std::size_t i = 0; i < expected_done.size(); ++i)
    expected_done[i] = i + 1;
  EXPECT_EQ(done_seen, expected_done);
  EXPECT_EQ(total_seen, 12u);
  EXPECT_EQ(cells_seen.size(), 12u);  // every cell, none twice
}

TEST_F(SweepTest, WritesResultsCsvWithOneRowPerCellInGridOrder) {
  SweepOutput out = run_sweep(request());
  // The directory is created by the writer (dtr/report/sweep_report.h).
  report::SweepFiles written =
      report::write_sweep(out, (dir_ / "out").string(), /*plots=*/false);
  const std::string csv = (dir_ / "out" / "results.csv").string();
  ASSERT_EQ(written.files, std::vector<std::string>{csv});
  EXPECT_TRUE(written.warnings.empty());
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 13u);
  EXPECT_EQ(lines[0], report::result_csv_header());
  for (std::size_t i = 0; i < out.cells.size(); ++i) {
    // Each row starts "trace,heuristic,policy,ratio,budget," in grid order
    // (ratios with the table's 10 significant digits).
    const SweepCell& c = out.cells[i];
    std::ostringstream prefix;
    prefix.precision(10);
    prefix << c.trace << ',' << c.result.heuristic << ",eager,"
           << c.result.budget_ratio << ',' << c.result.budget_bytes << ',';
    EXPECT_EQ(lines[i + 1].rfind(prefix.str(), 0), 0u)
        << lines[i + 1] << " does not start with " << prefix.str();
    const std::string status(to_string(c.result.status));
    EXPECT_NE(lines[i + 1].find("," + status + ","), std::string::npos)
        << lines[i + 1];
  }
}

TEST_F(SweepTest, BuiltInModelSpecsAreSweptUnderTheirModelName) {
  SweepRequest r = request(1);
  r.specs = {"model:chain?depth=4"};
  r.ratios = {1.0};
  r.heuristics = {"dtr"};
  SweepOutput out = run_sweep(r);
  ASSERT_EQ(out.cells.size(), 1u);
  EXPECT_EQ(out.cells[0].trace, "chain?depth=4");
  EXPECT_EQ(out.cells[0].result.status, SimStatus::kOk);
  // 4 forward layers, the seed gradient and 4 backward ones, 1000 ns each.
  EXPECT_EQ(out.cells[0].result.baseline.compute_ns, 9000);
}

TEST_F(SweepTest, EmptyListsAreRejected) {
  SweepRequest no_ratios = request();
  no_ratios.ratios.clear();
  expect_rejected<InvalidArgument>(no_ratios, {"[sweep]", "no budget ratios"});
  SweepRequest no_heuristics = request();
  no_heuristics.heuristics.clear();
  expect_rejected<InvalidArgument>(no_heuristics, {"[sweep]", "no heuristics"});
}

TEST_F(SweepTest, RatiosThatAreNotPositiveFiniteNumbersAreRejected) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (auto [ratio, shown] : std::vector<std::pair<double, std::string>>{
           {0.0, "got 0"}, {-0.5, "got -0.5"}, {nan, "nan"}, {inf, "inf"}}) {
    SCOPED_TRACE(shown);
    SweepRequest r = request();
    r.ratios = {1.0, ratio};  // a good ratio first does not help
    expect_rejected<InvalidArgument>(
        r, {"[sweep] budget ratios must be positive finite numbers", shown});
    // Checked before any trace is read.
    r.specs = {(dir_ / "missing.log").string()};
    expect_rejected<InvalidArgument>(r, {shown});
  }
}

TEST_F(SweepTest, ARatioWhoseBudgetOverflowsNamesTheTrace) {
  SweepRequest r = request();
  r.ratios = {1.0, 1e20};
  expect_rejected<InvalidArgument>(r, {"[sweep]", "small_a", "1e+20"});
}

TEST_F(SweepTest, BadHeuristicThreadsOrThrashLimitAreRejected) {
  SweepRequest unknown = request();
  unknown.heuristics = {"dtr", "no-such-heuristic"};
  expect_rejected<InvalidArgument>(unknown, {"no-such-heuristic"});
  SweepRequest no_threads = request();
  no_threads.threads = 0;
  expect_rejected<InvalidArgument>(no_threads, {"threads", "got 0"});
  SweepRequest low_limit = request();
  low_limit.thrash_limit = 0.5;
  expect_rejected<InvalidArgument>(low_limit, {"thrash limit", "0.5"});
}

TEST_F(SweepTest, AMissingTraceFileIsAnErrorNamingIt) {
  SweepRequest r = request();
  const std::string missing = (dir_ / "missing.log").string();
  r.specs = {trace_a_, missing};
  expect_rejected<Error>(r, {missing});
}

}  // namespace
}  // namespace dtr::sim
