// The simulator's prediction on a trace recorded by `dtr train --record`
// must match what the runtime did on the same budget, for every model
// `dtr train` knows.
//
// Why they agree exactly: the trace holds every operator call the kernel saw,
// with the output sizes and costs it used (the byte cost model, so both
// sides score candidates identically), and the values the runtime holds
// (PIN/UNPIN, Note [Holds in the trace]), and the simulator forgets dead
// values as the runtime does (Note [Forgetting dead values]). Both sides
// then run the same core runtime with the same protocol (begin_call locks
// like a frame; moved writes make room first, Note [Room for moved
// writes]), nothing is evicted outside the heuristic's choice (Note [Dying
// cells]), and a recorded call's inputs fall back to argument order as
// begin_call's do (Note [Inputs in argument order]), so heuristic
// evictions and replays are equal, for every model: kernels that allocate
// scratch beside their outputs (UNet's and DenseNet's convolutions) record
// its peak as the call's workspace, for which both sides make room before
// the op runs and before each replay (Note [Workspace]). The peaks must
// stay within the budget and agree within 1% of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include "dtr/sim/simulator.h"
#include "dtr/torch/train/trainer.h"
#include "dtr/trace/trace_reader.h"

namespace {

struct Case {
  const char* model;
  std::int64_t batch;
  std::optional<std::int64_t> seq_len;  // lstm's time steps
  double ratio = 0.5;                   // of the model's peak
};

class TracePredictionTest : public ::testing::TestWithParam<Case> {};

TEST_P(TracePredictionTest, SimulatorPredictsPeakEvictionsAndReplays) {
  const Case c = GetParam();
  const auto path = std::filesystem::temp_directory_path() /
                    (std::string("dtr-prediction-") + c.model + "-" +
                     std::to_string(c.batch) + "-" +
                     std::to_string(std::lround(c.ratio * 10)) + ".log");
  dtr::pt::train::TrainOptions o;
  o.model = c.model;
  o.batch = c.batch;
  o.seq_len = c.seq_len;
  o.steps = 1;
  o.budget_ratio = c.ratio;
  o.bytes_cost = true;
  o.heuristic = "dtr";  // not auto: one heuristic on both sides
  o.record = path.string();
  std::ostringstream log;
  dtr::pt::train::RunReport run;
  ASSERT_NO_THROW(run = dtr::pt::train::run_train(o, log)) << log.str();

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
  const auto peak_slack =
      static_cast<std::int64_t>(static_cast<double>(budget) * 0.01);
  EXPECT_LE(std::abs(sim.peak_bytes - run.dtr_peak_bytes), peak_slack)
      << "simulated " << sim.peak_bytes << ", runtime " << run.dtr_peak_bytes;
  EXPECT_EQ(sim.evictions, run.stats.evictions);
  EXPECT_EQ(sim.remats, run.stats.remat_ops);
  EXPECT_GT(run.stats.remat_ops, 0u) << "the budget forced no replay";
}

INSTANTIATE_TEST_SUITE_P(
    Models, TracePredictionTest,
    ::testing::Values(Case{"mlp", 2048}, Case{"resnet", 8}, Case{"densenet", 4},
                      Case{"unet", 2}, Case{"unet", 4}, Case{"lstm", 256, 16},
                      Case{"treelstm", 64}, Case{"transformer", 4},
                      Case{"mlp", 2048, std::nullopt, 0.4}),
    [](const auto& info) {
      const int tenths = static_cast<int>(std::lround(info.param.ratio * 10));
      return std::string(info.param.model) + "_batch" +
             std::to_string(info.param.batch) +
             (tenths == 5 ? std::string() : "_at_0_" + std::to_string(tenths));
    });

}  // namespace
