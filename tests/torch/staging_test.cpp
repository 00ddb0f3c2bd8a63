// `dtr train --stage --check`: staged steps replay the previous step's
// evictions with no search and stay bitwise identical to plain LibTorch;
// a dynamic model (a different tree each step) diverges and falls back.
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>

#include "dtr/torch/dtr_torch.h"
#include "dtr/torch/train/trainer.h"

namespace {

struct Case {
  const char* model;
  std::int64_t batch;
  double ratio;
  bool dynamic;  // its graph changes from step to step
};

class StagingTrainTest : public ::testing::TestWithParam<Case> {};

TEST_P(StagingTrainTest, StagedRunIsBitwiseIdenticalToPlain) {
  const Case c = GetParam();
  dtr::pt::train::TrainOptions o;
  o.model = c.model;
  o.batch = c.batch;
  o.steps = 4;
  o.budget_ratio = c.ratio;
  o.check = true;
  o.stage = true;
  o.bytes_cost = true;  // deterministic decisions (see train_check_test)
  std::ostringstream log;
  dtr::pt::train::RunReport run;
  if (std::string(c.model) == "lstm") o.seq_len = 16;
  EXPECT_NO_THROW(run = dtr::pt::train::run_train(o, log)) << log.str();
  if (::testing::Test::HasFailure()) return;
  EXPECT_NE(log.str().find("bitwise identical"), std::string::npos)
      << log.str();
  EXPECT_LE(run.dtr_peak_bytes, run.stats.budget_bytes) << log.str();
  ASSERT_GT(run.steps.front().eviction_searches, 0u)
      << "the first step did not evict: nothing to stage\n"
      << log.str();
  EXPECT_EQ(run.staged_steps + run.diverged_steps, 3u) << log.str();
  if (c.dynamic) {
    EXPECT_GT(run.diverged_steps, 0u) << log.str();
  } else {
    // A step may differ from the first (state the first step created);
    // from then on each repeats the one before.
    EXPECT_GE(run.staged_steps, 2u) << log.str();
    EXPECT_EQ(run.steps.back().eviction_searches, 0u) << log.str();
  }
  EXPECT_FALSE(dtr::pt::set_staging(false)) << "--stage left staging on";
}

INSTANTIATE_TEST_SUITE_P(Models, StagingTrainTest,
                         ::testing::Values(Case{"resnet", 4, 0.5, false},
                                           Case{"resnet", 4, 0.3, false},
                                           Case{"lstm", 256, 0.5, false},
                                           Case{"treelstm", 32, 0.5, true}),
                         [](const auto& info) {
                           return std::string(info.param.model) + "_" +
                                  std::to_string(
                                      static_cast<int>(info.param.ratio * 10));
                         });

}  // namespace
