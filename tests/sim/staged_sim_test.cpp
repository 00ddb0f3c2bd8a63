// The simulator's staging (SimConfig::stage, `dtr sim --stage`): the steps
// of an online run, replayed from their records, give the same compute and
// peak with zero searches, on built-in models and the paper's traces.
#include <gtest/gtest.h>

#include <filesystem>

#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/trace_reader.h"

namespace dtr::sim {
namespace {

const std::string kTraces = std::string(DTR_SHARED_DIR) + "/traces";

// Online (recorded), then staged from the records: the same run, no search.
void expect_staged_equals_online(const trace::Program& p,
                                 const std::string& heuristic, double ratio) {
  SCOPED_TRACE(p.source + " " + heuristic + " " + std::to_string(ratio));
  const Baseline baseline = compute_baseline(p);
  SimConfig config;
  config.heuristic = heuristic;
  config.budget_ratio = ratio;
  config.stage = SimConfig::StageMode::kRecord;
  const SimResult online = simulate(p, baseline, config);
  if (online.status != SimStatus::kOk) return;  // nothing to replay
  config.plans = &online.captured;
  const SimResult staged = simulate(p, baseline, config);
  EXPECT_EQ(staged.status, SimStatus::kOk);
  EXPECT_EQ(staged.model_compute_ns, online.model_compute_ns);
  EXPECT_EQ(staged.remat_compute_ns, online.remat_compute_ns);
  EXPECT_EQ(staged.peak_bytes, online.peak_bytes);
  EXPECT_EQ(staged.evictions, online.evictions);
  EXPECT_EQ(staged.remats, online.remats);
  EXPECT_EQ(staged.eviction_searches, 0u);
  EXPECT_EQ(staged.staging.planned_evictions, online.evictions);
  EXPECT_EQ(staged.staging.diverged_steps, 0u);
  EXPECT_EQ(online.eviction_searches, online.evictions);
}

TEST(StagedSimTest, BuiltInModelsReplayWithNoSearch) {
  for (const char* model : {"model:resnet", "model:lstm", "model:treelstm"}) {
    const NamedProgram p = load_program(model);
    for (double ratio : {0.7, 0.5, 0.3}) {
      expect_staged_equals_online(p.program, "dtr", ratio);
    }
  }
}

TEST(StagedSimTest, SharedTracesReplayWithNoSearch) {
  if (!std::filesystem::exists(kTraces)) {
    GTEST_SKIP() << "the paper's traces are not at " << kTraces;
  }
  for (const auto& entry : std::filesystem::directory_iterator(kTraces)) {
    if (entry.path().extension() != ".log") continue;
    const trace::Program p = trace::read_trace_file(entry.path().string());
    for (const char* heuristic : {"dtr", "dtr-eq", "lru"}) {
      for (double ratio : {0.7, 0.5, 0.3}) {
        expect_staged_equals_online(p, heuristic, ratio);
      }
    }
  }
}

}  // namespace
}  // namespace dtr::sim
