// The registry of heuristics (dtr/core/heuristic_registry.h): the paper's
// seven in its order, and a heuristic registered later found wherever
// heuristics are picked by name. The command line's side is in
// tests/cli/toy_heuristic_cli_test.cpp, the Python package's in
// tests/torch/heuristic_op_test.cpp.
#include "dtr/core/heuristic_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "support/toy_heuristic.h"

namespace dtr {
namespace {

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(HeuristicRegistryTest, ThePapersSevenComeFirstInItsOrder) {
  const std::vector<std::string> names = heuristic_names();
  ASSERT_GE(names.size(), 7u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 7),
            (std::vector<std::string>{"dtr", "dtr-eq", "dtr-local", "msps",
                                      "lru", "size", "random"}));
  for (const HeuristicEntry& e : registered_heuristics()) {
    EXPECT_EQ(make_heuristic(e.name)->name(), e.name);
    EXPECT_FALSE(e.summary.empty()) << e.name;
  }
  EXPECT_FALSE(contains(sim::auto_candidates(), "random"));
}

TEST(HeuristicRegistryTest, ARegisteredHeuristicIsFoundByEveryLookup) {
  testing::register_toy_heuristic();
  const std::string toy(testing::kToyHeuristic);
  EXPECT_EQ(make_heuristic(toy)->name(), toy);
  EXPECT_EQ(heuristic_names().back(), toy);
  EXPECT_TRUE(contains(sim::auto_candidates(), toy));
  EXPECT_NE(heuristic_list(/*auto_only=*/true).find(toy), std::string::npos);
  EXPECT_NO_THROW(sim::check_heuristic_name(toy));

  // It runs, alone and as one of auto's candidates.
  const sim::NamedProgram p = sim::load_program("model:unet");
  const sim::Baseline b = sim::compute_baseline(p.program);
  sim::SimConfig config;
  config.heuristic = toy;
  config.budget_ratio = 0.6;
  config.thrash_limit = 1e9;
  const sim::SimResult alone = sim::simulate(p.program, b, config);
  ASSERT_EQ(alone.status, sim::SimStatus::kOk) << alone.message;
  EXPECT_GT(alone.evictions, 0u);
  EXPECT_EQ(alone.heuristic, toy);
  config.heuristic = "auto";
  config.thrash_limit = 2.0;
  EXPECT_EQ(sim::simulate(p.program, b, config).status, sim::SimStatus::kOk);
}

TEST(HeuristicRegistryTest, BadRegistrationsAreRefusedAndChangeNothing) {
  testing::register_toy_heuristic();
  const std::vector<std::string> before = heuristic_names();
  auto factory = [](std::uint64_t) {
    return std::make_unique<testing::SmallestFirst>();
  };
  for (const char* name :
       {"", "a,b", "two words", "auto", "all", "dtr", "smallest-first"}) {
    SCOPED_TRACE(name);
    EXPECT_THROW(register_heuristic({name, "x", true, factory}),
                 InvalidArgument);
  }
  EXPECT_THROW(register_heuristic({"no-factory", "x", true, nullptr}),
               InvalidArgument);
  // Its instances must bear its name: auto and fork() go by name().
  EXPECT_THROW(register_heuristic({"another-name", "x", true, factory}),
               InvalidArgument);
  EXPECT_THROW(make_heuristic("another-name"), InvalidArgument);
  EXPECT_EQ(heuristic_names(), before);
  EXPECT_THROW(make_heuristic("no-factory"), InvalidArgument);
}

}  // namespace
}  // namespace dtr
