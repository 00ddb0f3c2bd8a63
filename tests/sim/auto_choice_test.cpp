// `auto` in the simulator: the run of the best fixed heuristic, never worse
// than any of them, and never failing where one of them trains.
#include "dtr/sim/auto_choice.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/sim/parallel.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/sweep.h"

namespace dtr::sim {
namespace {

SimResult result(SimStatus status, std::int64_t remat_ns) {
  SimResult r;
  r.status = status;
  r.remat_compute_ns = remat_ns;
  return r;
}

// Then any registered later (a test's, in this process).
TEST(AutoChoiceTest, CandidatesAreTheSixFixedHeuristicsInThePapersOrder) {
  const std::vector<std::string> c = auto_candidates();
  ASSERT_GE(c.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(c.begin(), c.begin() + 6),
            (std::vector<std::string>{"dtr", "dtr-eq", "dtr-local", "msps",
                                      "lru", "size"}));
}

TEST(AutoChoiceTest, BestRunIsTheCheapestThatTrainsWithTiesToTheEarlier) {
  using enum SimStatus;
  EXPECT_EQ(best_run({result(kOk, 5), result(kOk, 3), result(kOk, 4)}), 1u);
  EXPECT_EQ(best_run({result(kOk, 3), result(kOk, 3)}), 0u);
  EXPECT_EQ(best_run({result(kOk, 4), result(kOk, 3), result(kOk, 3)}), 1u);
  // A failed run never wins, however little it recomputed before failing.
  EXPECT_EQ(best_run({result(kOom, 0), result(kThrash, 1), result(kOk, 9)}),
            2u);
  EXPECT_EQ(best_run({result(kOom, 5), result(kThrash, 1)}), 0u);
}

TEST(AutoChoiceTest, AutoIsAHeuristicNameOfTheSimulatorOnly) {
  EXPECT_NO_THROW(check_heuristic_name("auto"));
  EXPECT_NO_THROW(check_heuristic_name("msps"));
  EXPECT_THROW(check_heuristic_name("autox"), InvalidArgument);
  EXPECT_THROW(make_heuristic("auto"), InvalidArgument);
}

// Runs every fixed heuristic and auto on one cell and checks auto against
// them; returns auto's result.
SimResult check_cell(const trace::Program& p, const Baseline& b, double ratio) {
  SimConfig config;
  config.budget_ratio = ratio;
  config.heuristic = "auto";
  SimResult a = simulate(p, b, config);
  EXPECT_EQ(a.heuristic, "auto");
  bool any_ok = false;
  std::int64_t best_total = 0;
  for (const std::string& h : auto_candidates()) {
    config.heuristic = h;
    SimResult r = simulate(p, b, config);
    if (r.status != SimStatus::kOk) continue;
    const std::int64_t total = r.model_compute_ns + r.remat_compute_ns;
    if (!any_ok || total < best_total) best_total = total;
    any_ok = true;
    EXPECT_LE(a.model_compute_ns + a.remat_compute_ns, total) << h;
    if (a.chosen == h) {
      EXPECT_EQ(a.remat_compute_ns, r.remat_compute_ns);
    }
  }
  if (any_ok) {
    EXPECT_EQ(a.status, SimStatus::kOk);
    EXPECT_EQ(a.model_compute_ns + a.remat_compute_ns, best_total);
    EXPECT_FALSE(a.chosen.empty());
  } else {
    EXPECT_NE(a.status, SimStatus::kOk);
    EXPECT_TRUE(a.chosen.empty());
    EXPECT_NE(a.message.find("every heuristic failed"), std::string::npos);
  }
  return a;
}

TEST(AutoChoiceTest, NeverWorseThanAFixedHeuristicOnBuiltInModels) {
  int choices_not_dtr = 0, failures = 0;
  for (const char* spec : {"model:chain?depth=24", "model:unet",
                           "model:densenet", "model:treelstm?seed=3"}) {
    NamedProgram p = load_program(spec);
    Baseline b = compute_baseline(p.program);
    for (double ratio : {0.8, 0.5, 0.3, 0.1, 0.01}) {
      SCOPED_TRACE(std::string(spec) + " ratio " + std::to_string(ratio));
      SimResult a = check_cell(p.program, b, ratio);
      choices_not_dtr += !a.chosen.empty() && a.chosen != "dtr";
      failures += a.status != SimStatus::kOk;
    }
  }
  // Not vacuous: some cells choose another heuristic than the first and
  // some fail under all of them.
  EXPECT_GT(choices_not_dtr, 0);
  EXPECT_GT(failures, 0);
}

TEST(AutoChoiceTest, SweepsAcceptAutoAndNameTheChoice) {
  SweepRequest request;
  request.specs = {"model:chain?depth=16"};
  request.ratios = {0.5};
  request.heuristics = {"lru", "auto"};
  SweepOutput out = run_sweep(request);
  ASSERT_EQ(out.cells.size(), 2u);
  EXPECT_EQ(out.cells[1].result.heuristic, "auto");
  EXPECT_FALSE(out.cells[1].result.chosen.empty());
  EXPECT_TRUE(out.cells[0].result.chosen.empty());
  request.heuristics = {"auto", "best"};
  EXPECT_THROW(run_sweep(request), InvalidArgument);
}

// auto <= each fixed heuristic on every shared trace at every
// ratio of the shipped sweep, and it trains wherever one of them trains.
TEST(AutoChoiceTest, NeverWorseThanAFixedHeuristicOnTheSharedTraces) {
  const std::string traces = std::string(DTR_SHARED_DIR) + "/traces";
  if (!std::filesystem::exists(traces + "/manifest.json")) {
    GTEST_SKIP() << "the paper's traces are not at " << traces;
  }
  std::vector<std::string> specs =
      expand_program_specs({traces + "/manifest.json"});
  ASSERT_EQ(specs.size(), 5u);
  std::vector<NamedProgram> programs(specs.size());
  std::vector<Baseline> baselines(specs.size());
  parallel_for(specs.size(), 2, [&](std::size_t i) {
    programs[i] = load_program(specs[i]);
    baselines[i] = compute_baseline(programs[i].program);
  });
  const std::vector<double> ratios = {1.0, 0.9, 0.8, 0.7, 0.6,
                                      0.5, 0.4, 0.3, 0.2, 0.1};
  for (std::size_t i = 0; i < programs.size(); ++i) {
    for (double ratio : ratios) {
      SCOPED_TRACE(programs[i].name + " ratio " + std::to_string(ratio));
      check_cell(programs[i].program, baselines[i], ratio);
    }
  }
}

}  // namespace
}  // namespace dtr::sim
