// `dtr plan` as a user runs it: exit status, JSON and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_cli.h"

namespace dtr::cli {
namespace {

namespace fs = std::filesystem;

using PlanRun = dtr::testing::CliRun;

// `dtr ARGS` in a fresh scratch directory, removed afterwards.
PlanRun dtr(const std::string& args) {
  const fs::path dir = fs::temp_directory_path() /
                       ("dtr_plan_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  PlanRun r = dtr::testing::run_cli(dir, args);
  fs::remove_all(dir);
  return r;
}

TEST(PlanCliTest, ComparisonJsonHasEveryPlannerAndHeuristic) {
  PlanRun r =
      dtr("plan 'model:chain?depth=6' --budget-ratio 0.6 --planner all "
          "--heuristics dtr,lru --time-limit 20 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 8u);
  const nlohmann::json& milp = j["results"][0];
  EXPECT_EQ(milp["name"], "milp");
  EXPECT_EQ(milp["status"], "optimal");
  EXPECT_EQ(milp["verdict"], "valid");
  EXPECT_LE(milp["peak_bytes"].get<std::int64_t>(),
            j["budget_bytes"].get<std::int64_t>());
  for (const nlohmann::json& row : j["results"]) {
    if (!row["fits"].get<bool>()) continue;
    EXPECT_LE(milp["compute_ns"].get<std::int64_t>(),
              row["compute_ns"].get<std::int64_t>())
        << row["name"];
    if (row["kind"] == "planner") {
      EXPECT_EQ(row["verdict"], "valid");
    }
  }
}

// The shipped MLP at 0.6: no frontier-advancing plan fits, DTR trains; the
// MILP starts from DTR's recorded run (recompute stages) and is never worse.
TEST(PlanCliTest, MilpStartsFromDtrAndBoundsIt) {
  PlanRun r = dtr("plan " + std::string(DTR_DATA_DIR) +
                  "/traces/mlp.log --budget-ratio 0.6 --planner milp "
                  "--heuristics dtr-local --time-limit 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 2u);
  const nlohmann::json& milp = j["results"][0];
  const nlohmann::json& dtr_local = j["results"][1];
  ASSERT_TRUE(milp["fits"].get<bool>()) << milp["message"];
  ASSERT_TRUE(dtr_local["fits"].get<bool>());
  EXPECT_LE(milp["compute_ns"].get<std::int64_t>(),
            dtr_local["compute_ns"].get<std::int64_t>());
  const double bound = j["lower_bound_ns"].get<double>();
  EXPECT_GE(bound, j["baseline_compute_ns"].get<double>());
  EXPECT_LE(bound, milp["compute_ns"].get<double>());
  EXPECT_NEAR(dtr_local["ratio_to_bound"].get<double>(),
              dtr_local["compute_ns"].get<double>() / bound, 1e-9);
}

TEST(PlanCliTest, OnePlannerWithoutAScheduleExitsTwo) {
  PlanRun r =
      dtr("plan 'model:chain?depth=6' --budget-ratio 0.1 --planner milp");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("infeasible"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("dtr: error: [plan] milp: status infeasible"),
            std::string::npos)
      << r.err;
}

TEST(PlanCliTest, BadInputExitsOneNamingIt) {
  PlanRun unknown =
      dtr("plan 'model:chain?depth=4' --budget-ratio 0.5 "
          "--planner gurobi");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("unknown planner 'gurobi'"), std::string::npos)
      << unknown.err;
  PlanRun no_budget = dtr("plan 'model:chain?depth=4'");
  EXPECT_EQ(no_budget.exit_code, 1);
  EXPECT_NE(no_budget.err.find("--budget-ratio"), std::string::npos);
  PlanRun bad_limit =
      dtr("plan 'model:chain?depth=4' --budget-ratio 0.5 "
          "--time-limit 0");
  EXPECT_EQ(bad_limit.exit_code, 1);
  EXPECT_NE(bad_limit.err.find("--time-limit"), std::string::npos)
      << bad_limit.err;
}

}  // namespace
}  // namespace dtr::cli
