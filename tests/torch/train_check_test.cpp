// `dtr train --check` on every model at CI sizes: the budgeted run must be
// bitwise identical to plain LibTorch and the allocator's real peak must be
// within the budget plus the memory outside DTR's control.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>

#include "dtr/core/error.h"
#include "dtr/models/model_registry.h"
#include "dtr/torch/train/models.h"
#include "dtr/torch/train/trainer.h"
#include "tests/support/scoped_env.h"

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
  {
    // 16 time steps instead of 32: the same per-step shapes, half the time.
    // Set for this run only: no test leaks environment changes.
    std::optional<dtr::testing::ScopedEnv> seq;
    if (std::string(c.model) == "lstm") seq.emplace("DTR_LSTM_SEQ", "16");
    EXPECT_NO_THROW(run = dtr::pt::train::run_train(o, log)) << log.str();
  }
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
