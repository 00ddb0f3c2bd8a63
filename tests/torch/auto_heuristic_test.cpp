// Step boundaries and `auto` in the LibTorch layer (Note [Step boundaries],
// Note [Auto protocol]).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/sim/simulator.h"
#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/train/trainer.h"
#include "dtr/trace/trace_reader.h"
#include "tests/torch/torch_test_support.h"

namespace dtr::pt::testing {
namespace {

// Restores auto (the default) whatever a test set.
class AutoHeuristicTest : public BudgetRestoringTest {
 protected:
  void TearDown() override {
    set_heuristic("auto");
    BudgetRestoringTest::TearDown();
  }
};

TEST_F(AutoHeuristicTest, ABoundaryWithNoOperatorSinceTheLastIsTheSame) {
  begin_step();
  const std::uint64_t at = stats().steps;
  begin_step();  // e.g. the trainer's loop, then the root's forward()
  EXPECT_EQ(stats().steps, at);
  torch::Tensor x = checkpoint(torch::ones({4}));
  torch::Tensor y = x + 1;
  begin_step();
  EXPECT_EQ(stats().steps, at + 1);
  begin_step();
  EXPECT_EQ(stats().steps, at + 1);
}

TEST_F(AutoHeuristicTest, CheckpointedModuleForwardBeginsAStep) {
  auto model = checkpoint(torch::nn::Linear(4, 4));
  model.forward(torch::ones({2, 4})).sum().backward();
  const std::uint64_t at = stats().steps;
  model(torch::ones({2, 4})).sum().backward();
  EXPECT_EQ(stats().steps, at + 1);
}

TEST_F(AutoHeuristicTest, AnExplicitHeuristicTurnsAutoOff) {
  EXPECT_EQ(heuristic(), "auto");
  EXPECT_TRUE(stats().auto_heuristic);
  set_heuristic("lru");
  EXPECT_EQ(heuristic(), "lru");
  EXPECT_EQ(stats().heuristic, "lru");
  EXPECT_FALSE(stats().auto_heuristic);
  EXPECT_THROW(set_heuristic("fastest"), InvalidArgument);
  EXPECT_EQ(heuristic(), "lru");
}

// One step of a recurrence over `length` inputs: a dynamic model when the
// length changes from step to step.
void recurrent_step(torch::Tensor& w, std::int64_t length) {
  begin_step();
  torch::Tensor h = checkpoint(torch::ones({64, 64}));
  for (std::int64_t i = 0; i < length; ++i) h = torch::tanh(h.matmul(w));
  h.sum().backward();
}

TEST_F(AutoHeuristicTest, ADynamicModelIsDecidedAgainForEachNewShape) {
  set_cost_model(CostModel::kBytes);
  torch::Tensor w = torch::eye(64).requires_grad_();
  Budget budget(10 * 64 * 64 * 4);  // 10 of the 16 KB hidden states
  const std::uint64_t before = stats().auto_decisions;
  for (std::int64_t length : {4, 4, 8, 8, 8, 12, 12, 12}) {
    recurrent_step(w, length);
  }
  begin_step();  // ends the last step
  const Stats s = stats();
  EXPECT_GE(s.auto_decisions - before, 3u) << to_string(s);
  // A static loop pays only the signature once its shape is known.
  for (int i = 0; i < 4; ++i) recurrent_step(w, 8);
  begin_step();
  EXPECT_EQ(stats().auto_decisions, s.auto_decisions);
  set_cost_model(CostModel::kMeasured);
}

TEST_F(AutoHeuristicTest, AnExplicitHeuristicNeverDecides) {
  set_cost_model(CostModel::kBytes);
  set_heuristic("size");
  torch::Tensor w = torch::eye(64).requires_grad_();
  Budget budget(10 * 64 * 64 * 4);
  const std::uint64_t before = stats().auto_decisions;
  for (std::int64_t length : {4, 8, 12}) recurrent_step(w, length);
  begin_step();
  EXPECT_EQ(stats().auto_decisions, before);
  EXPECT_EQ(stats().heuristic, "size");
  set_cost_model(CostModel::kMeasured);
}

struct Case {
  const char* model;
  std::int64_t batch;
  double ratio;
};

class AutoTrainTest : public ::testing::TestWithParam<Case> {
 protected:
  void TearDown() override { set_heuristic("auto"); }
};

// dtr train with auto: bitwise identical to plain LibTorch, and the
// heuristic it runs after the first step is one whose simulated compute
// on that step is <= every fixed heuristic's.
TEST_P(AutoTrainTest, ChoosesNoWorseThanAnyFixedHeuristicAndStaysExact) {
  const Case c = GetParam();
  train::TrainOptions o;
  o.model = c.model;
  o.batch = c.batch;
  o.steps = 3;
  o.budget_ratio = c.ratio;
  o.bytes_cost = true;
  o.check = true;
  std::ostringstream log;
  train::RunReport run;
  ASSERT_NO_THROW(run = train::run_train(o, log)) << log.str();
  EXPECT_NE(log.str().find("bitwise identical"), std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("heuristic: auto chose " + run.stats.heuristic),
            std::string::npos)
      << log.str();
  EXPECT_GE(run.stats.auto_decisions, 1u);

  // The same step, recorded under a fixed heuristic, simulated under each.
  const auto path = std::filesystem::temp_directory_path() /
                    (std::string("dtr-auto-") + c.model + ".log");
  o.steps = 1;
  o.check = false;
  o.heuristic = "dtr";
  o.record = path.string();
  train::RunReport one;
  ASSERT_NO_THROW(one = train::run_train(o, log)) << log.str();
  const trace::Program program = trace::read_trace_file(path.string());
  std::filesystem::remove(path);
  const sim::Baseline baseline = sim::compute_baseline(program);
  sim::SimConfig config;
  config.budget_bytes = one.stats.budget_bytes;

  config.heuristic = run.stats.heuristic;
  const sim::SimResult chosen = sim::simulate(program, baseline, config);
  ASSERT_EQ(chosen.status, sim::SimStatus::kOk) << chosen.message;
  for (const std::string& h : sim::auto_candidates()) {
    config.heuristic = h;
    const sim::SimResult r = sim::simulate(program, baseline, config);
    if (r.status != sim::SimStatus::kOk) continue;
    EXPECT_LE(chosen.remat_compute_ns, r.remat_compute_ns)
        << "auto chose " << run.stats.heuristic << ", " << h << " is cheaper";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, AutoTrainTest,
                         ::testing::Values(Case{"resnet", 4, 0.4},
                                           Case{"densenet", 4, 0.4}),
                         [](const auto& info) {
                           return std::string(info.param.model);
                         });

}  // namespace
}  // namespace dtr::pt::testing
