// The simulator's prediction on a trace recorded by `dtr train --record`
// must match what the runtime did on the same budget.
//
// Tolerance, and why: the trace holds every operator call the kernel saw,
// with the output sizes and costs it used (the byte cost model, so both
// sides score candidates identically). Two things the trace cannot carry
// make the runtime evict a little more: temporaries an operator allocates
// inside its kernel (the allocator hook makes room for them before they
// exist; the trace only has outputs) and values held after a lineage cut.
// So the peaks must agree within 1% of the budget and stay within it, and
// heuristic evictions and replays within 15% (+5) of each other. The
// Transformer is not here: the runtime evicts ~7x more than the simulator
// predicts, for a reason not yet identified (not temporaries: counted,
// 8 KB per step; docs/torch.md, "Simulator vs runtime").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include "dtr/sim/simulator.h"
#include "dtr/torch/train/trainer.h"
#include "dtr/trace/trace_reader.h"
#include "tests/support/scoped_env.h"

namespace {

struct Case {
  const char* model;
  std::int64_t batch;
  const char* lstm_seq;  // DTR_LSTM_SEQ, or nullptr
};

class TracePredictionTest : public ::testing::TestWithParam<Case> {};

bool close(double predicted, double actual) {
  return std::abs(predicted - actual) <= 0.15 * actual + 5;
}

TEST_P(TracePredictionTest, SimulatorPredictsPeakEvictionsAndReplays) {
  const Case c = GetParam();
  // For the recorded run only (an early ASSERT return restores it too).
  std::optional<dtr::testing::ScopedEnv> seq;
  if (c.lstm_seq != nullptr) seq.emplace("DTR_LSTM_SEQ", c.lstm_seq);
  const auto path = std::filesystem::temp_directory_path() /
                    (std::string("dtr-prediction-") + c.model + ".log");
  dtr::pt::train::TrainOptions o;
  o.model = c.model;
  o.batch = c.batch;
  o.steps = 1;
  o.budget_ratio = 0.5;
  o.bytes_cost = true;
  o.heuristic = "dtr";  // not auto: one heuristic on both sides
  o.record = path.string();
  std::ostringstream log;
  dtr::pt::train::RunReport run;
  ASSERT_NO_THROW(run = dtr::pt::train::run_train(o, log)) << log.str();
  seq.reset();

  const dtr::trace::Program program =
      dtr::trace::read_trace_file(path.string());
  std::filesystem::remove(path);
  dtr::sim::SimConfig config;
  config.heuristic = "dtr";  // as the runtime: o.heuristic above
  config.budget_bytes = run.stats.budget_bytes;
  config.thrash_limit = 1e9;  // compare, never give up
  const auto sim =
      dtr::sim::simulate(program, dtr::sim::compute_baseline(program), config);

  ASSERT_EQ(sim.status, dtr::sim::SimStatus::kOk) << sim.message;
  const std::int64_t budget = run.stats.budget_bytes;
  EXPECT_LE(sim.peak_bytes, budget);
  EXPECT_LE(run.dtr_peak_bytes, budget);
  EXPECT_LE(std::abs(sim.peak_bytes - run.dtr_peak_bytes), budget / 100)
      << "simulated " << sim.peak_bytes << ", runtime " << run.dtr_peak_bytes;
  EXPECT_TRUE(close(static_cast<double>(sim.evictions),
                    static_cast<double>(run.stats.evictions)))
      << "simulated " << sim.evictions << ", runtime " << run.stats.evictions;
  EXPECT_TRUE(close(static_cast<double>(sim.remats),
                    static_cast<double>(run.stats.remat_ops)))
      << "simulated " << sim.remats << ", runtime " << run.stats.remat_ops;
  EXPECT_GT(run.stats.remat_ops, 0u) << "the budget forced no replay";
}

INSTANTIATE_TEST_SUITE_P(Models, TracePredictionTest,
                         ::testing::Values(Case{"resnet32", 8, nullptr},
                                           Case{"treelstm", 64, nullptr},
                                           Case{"lstm", 256, "16"}),
                         [](const auto& info) {
                           return std::string(info.param.model);
                         });

}  // namespace
