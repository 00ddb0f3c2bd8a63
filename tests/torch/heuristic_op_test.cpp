// A heuristic registered in C++ (tests/support/toy_heuristic.h) reaches
// the Python package: `dtr.heuristics()` calls the operator dtr::heuristics
// called here, and `dtr.set_heuristic()` takes its name.
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/train/trainer.h"
#include "tests/support/toy_heuristic.h"

namespace dtr::pt::testing {
namespace {

std::vector<std::string> listed(bool auto_only) {
  const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("dtr::heuristics", "");
  torch::jit::Stack stack{c10::IValue(auto_only)};
  op.callBoxed(&stack);
  std::vector<std::string> names;
  for (const c10::IValue& v : stack.at(0).toListRef()) {
    names.push_back(v.toStringRef());
  }
  return names;
}

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(HeuristicOpTest, ARegisteredHeuristicIsListedAndTrainsExactly) {
  dtr::testing::register_toy_heuristic();
  const std::string toy(dtr::testing::kToyHeuristic);
  EXPECT_TRUE(contains(listed(false), toy));
  EXPECT_TRUE(contains(listed(true), toy));
  EXPECT_TRUE(contains(listed(false), "random"));
  EXPECT_FALSE(contains(listed(true), "random"));

  train::TrainOptions o;
  o.model = "mlp";
  o.steps = 2;
  o.budget_ratio = 0.5;
  o.heuristic = toy;
  o.check = true;
  std::ostringstream log;
  train::RunReport run;
  ASSERT_NO_THROW(run = train::run_train(o, log)) << log.str();
  EXPECT_EQ(run.stats.heuristic, toy);
  EXPECT_GT(run.stats.evictions, 0u) << log.str();
  EXPECT_NE(log.str().find("bitwise identical"), std::string::npos)
      << log.str();
  set_heuristic("auto");
}

}  // namespace
}  // namespace dtr::pt::testing
