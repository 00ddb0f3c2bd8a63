// `dtr train --check` on every model at CI sizes: the budgeted run must be
// bitwise identical to plain LibTorch and the allocator's real peak must be
// within the budget plus the memory outside DTR's control.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "dtr/core/error.h"
#include "dtr/models/model_registry.h"
#include "dtr/torch/train/bitwise.h"
#include "dtr/torch/train/models.h"
#include "dtr/torch/train/trainer.h"

namespace {

// `dtr train` and `dtr gen` name the same network the same way.
TEST(TrainModelsTest, NamesAreTheSimulatorsWhereBothHaveTheModel) {
  const auto& traces = dtr::models::model_names();
  for (const std::string& name : dtr::pt::train::model_names()) {
    if (name == "mlp") continue;  // no trace builder
    EXPECT_NE(std::find(traces.begin(), traces.end(), name), traces.end())
        << name;
  }
  EXPECT_EQ(dtr::pt::train::default_batch("resnet32"),
            dtr::pt::train::default_batch("resnet"));
  EXPECT_NE(dtr::pt::train::make_task("resnet32", 1), nullptr);
  EXPECT_THROW(dtr::pt::train::make_task("resnet50", 1), dtr::InvalidArgument);
}

TEST(TrainModelsTest, OnlyTheLstmTakesASequenceLength) {
  using dtr::pt::train::make_task;
  EXPECT_EQ(make_task("lstm", 2)->batch(0)[0].size(0),
            dtr::pt::train::kDefaultLstmSeqLen);
  EXPECT_EQ(make_task("lstm", 2, 5)->batch(0)[0].size(0), 5);
  EXPECT_THROW(make_task("lstm", 2, 0), dtr::InvalidArgument);
  EXPECT_THROW(make_task("mlp", 2, 5), dtr::InvalidArgument);
}

using dtr::pt::train::bitwise_equal;

TEST(BitwiseEqualTest, NanEqualsTheSameNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(bitwise_equal(nan, nan));
  EXPECT_TRUE(bitwise_equal(torch::full({3}, nan), torch::full({3}, nan)));
  // Another NaN is other bits.
  EXPECT_FALSE(bitwise_equal(nan, -nan));
}

TEST(BitwiseEqualTest, SignedZerosDiffer) {
  EXPECT_FALSE(bitwise_equal(0.0, -0.0));
  EXPECT_FALSE(bitwise_equal(torch::zeros({2}), -torch::zeros({2})));
}

TEST(BitwiseEqualTest, DtypeAndShapeCount) {
  EXPECT_FALSE(bitwise_equal(torch::zeros({4}, torch::kFloat),
                             torch::zeros({4}, torch::kInt)));
  EXPECT_FALSE(bitwise_equal(torch::zeros({4}), torch::zeros({2, 2})));
  EXPECT_FALSE(bitwise_equal(torch::zeros({0}), torch::zeros({0, 1})));
  EXPECT_TRUE(bitwise_equal(torch::zeros({0}), torch::zeros({0})));
  EXPECT_TRUE(bitwise_equal(at::Tensor(), at::Tensor()));
  EXPECT_FALSE(bitwise_equal(at::Tensor(), torch::zeros({1})));
}

TEST(BitwiseEqualTest, StridesDoNotCount) {
  auto m = torch::arange(6, torch::kFloat).reshape({2, 3});
  EXPECT_TRUE(bitwise_equal(m.t(), m.t().contiguous()));
  EXPECT_FALSE(bitwise_equal(m.t(), m.t().flip(0)));
}

// A run that diverges to NaN under DTR and plain alike is the same run:
// --check passes, where value equality called it different.
TEST(TrainCheckNanTest, DivergedRunsAreBitwiseIdentical) {
  dtr::pt::train::TrainOptions o;
  o.model = "mlp";
  o.batch = 64;
  o.steps = 4;
  o.lr = 1e30;
  o.check = true;
  o.bytes_cost = true;
  std::ostringstream log;
  dtr::pt::train::RunReport run;
  EXPECT_NO_THROW(run = dtr::pt::train::run_train(o, log)) << log.str();
  ASSERT_FALSE(run.steps.empty()) << log.str();
  EXPECT_TRUE(std::isnan(run.steps.back().loss)) << log.str();
  EXPECT_NE(log.str().find("bitwise identical"), std::string::npos)
      << log.str();
}

// Note [The floor]: the stated floor is a lower bound; `dtr train` also
// names a budget that fits, and that budget does fit.
TEST(TrainOutOfMemoryTest, NamesABudgetThatFits) {
  dtr::pt::train::TrainOptions o;
  o.model = "mlp";
  o.batch = 256;
  o.steps = 2;
  o.bytes_cost = true;
  o.heuristic = "dtr";
  o.budget_bytes = 1000;
  std::ostringstream log;
  std::string what;
  try {
    dtr::pt::train::run_train(o, log);
    FAIL() << "expected OutOfMemory at 1000 bytes";
  } catch (const dtr::OutOfMemory& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("(a lower bound"), std::string::npos) << what;
  const std::string key = "Without a budget this run peaks at ";
  const auto at = what.find(key);
  ASSERT_NE(at, std::string::npos) << what;
  const std::int64_t peak = std::stoll(what.substr(at + key.size()));
  o.budget_bytes.reset();
  EXPECT_EQ(dtr::pt::train::run_train(o, log).dtr_peak_bytes, peak);
  o.budget_bytes = peak;
  EXPECT_NO_THROW(dtr::pt::train::run_train(o, log)) << log.str();
}

// Note [Thrash limit]: `dtr train --thrash-limit` stops a run whose step
// recomputes past the limit, and a later run without one is not stopped.
TEST(TrainThrashLimitTest, APassedLimitStopsTheRunAndAnUnsetOneDoesNot) {
  dtr::pt::train::TrainOptions o;
  o.model = "mlp";
  o.batch = 512;
  o.steps = 2;
  o.heuristic = "dtr";
  o.budget_ratio = 0.5;
  o.thrash_limit = 1e-9;  // any recomputation at all passes it
  std::ostringstream log;
  try {
    dtr::pt::train::run_train(o, log);
    FAIL() << "expected ThrashLimitExceeded\n" << log.str();
  } catch (const dtr::pt::ThrashLimitExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("past the thrash limit of 1e-09x"),
              std::string::npos)
        << e.what();
  }
  o.thrash_limit.reset();
  dtr::pt::train::RunReport run;
  EXPECT_NO_THROW(run = dtr::pt::train::run_train(o, log)) << log.str();
  EXPECT_GT(run.stats.remat_ops, 0u) << log.str();  // it did recompute
  o.thrash_limit = 0;
  EXPECT_THROW(dtr::pt::train::run_train(o, log), dtr::InvalidArgument);
}

struct Case {
  const char* model;
  std::int64_t batch;
  double ratio;
};

class TrainCheckTest : public ::testing::TestWithParam<Case> {};

TEST_P(TrainCheckTest, BudgetedRunIsBitwiseIdenticalToPlain) {
  const Case c = GetParam();
  dtr::pt::train::TrainOptions o;
  o.model = c.model;
  o.batch = c.batch;
  o.steps = 2;
  o.budget_ratio = c.ratio;
  o.check = true;
  // Measured op times vary run to run and so would eviction decisions; the
  // byte cost model makes the test deterministic.
  o.bytes_cost = true;
  std::ostringstream log;
  dtr::pt::train::RunReport run;
  // 16 time steps instead of 32: the same per-step shapes, half the time.
  if (std::string(c.model) == "lstm") o.seq_len = 16;
  EXPECT_NO_THROW(run = dtr::pt::train::run_train(o, log)) << log.str();
  if (::testing::Test::HasFailure()) return;
  EXPECT_NE(log.str().find("bitwise identical"), std::string::npos)
      << log.str();
  EXPECT_LE(run.dtr_peak_bytes, run.stats.budget_bytes) << log.str();
}

INSTANTIATE_TEST_SUITE_P(
    Models, TrainCheckTest,
    ::testing::Values(Case{"mlp", 2048, 0.5}, Case{"resnet", 4, 0.5},
                      Case{"densenet", 4, 0.5}, Case{"unet", 2, 0.5},
                      Case{"lstm", 256, 0.5}, Case{"treelstm", 32, 0.5},
                      Case{"transformer", 4, 0.5}),
    [](const auto& info) { return std::string(info.param.model); });

}  // namespace
