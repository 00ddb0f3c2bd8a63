// The score index and the fast scan choose exactly the scan's victim (Note
// [Exact victim from an index], Note [Pruned region scan]): every eviction
// of every shared trace, recorded trace and built-in model, for each indexed
// heuristic at several budgets, runs in ChoiceMode::kCheck and
// kCheckFastScan, which throw dtr::InternalError on any difference.
#include <gtest/gtest.h>

#include <filesystem>

#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/trace_reader.h"

namespace dtr::sim {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> logs_in(const std::string& dir) {
  std::vector<std::string> logs;
  if (!fs::exists(dir)) return logs;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".log") logs.push_back(e.path().string());
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// Runs every (heuristic, ratio) cell in check mode; returns the evictions
// chosen by the heuristics (so that a test is not vacuous).
std::uint64_t check_program(const trace::Program& p, const std::string& name) {
  Baseline base = compute_baseline(p);
  std::uint64_t evictions = 0;
  for (const char* h : {"dtr", "msps", "dtr-eq", "dtr-local", "lru", "size"}) {
    for (double ratio : {0.8, 0.6, 0.4, 0.3, 0.2, 0.1}) {
      SCOPED_TRACE(name + " " + h + " " + std::to_string(ratio));
      SimConfig config;
      config.heuristic = h;
      config.budget_ratio = ratio;
      // The index (or the fast scan under churn), then the fast scan on
      // every choice (Note [Pruned region scan]), each against the scan.
      for (ChoiceMode mode : {ChoiceMode::kCheck, ChoiceMode::kCheckFastScan}) {
        config.choice = mode;
        SimResult r;
        EXPECT_NO_THROW(r = simulate(p, base, config));
        evictions += r.evictions;
      }
    }
  }
  return evictions;
}

TEST(EqualVictimsTest, SharedTraces) {
  auto logs = logs_in(std::string(DTR_SHARED_DIR) + "/traces");
  if (logs.empty()) GTEST_SKIP() << "the paper's traces are absent";
  for (const auto& log : logs) {
    EXPECT_GT(check_program(trace::read_trace_file(log), log), 0u);
  }
}

TEST(EqualVictimsTest, RecordedTraces) {
  auto logs = logs_in(std::string(DTR_DATA_DIR) + "/traces");
  ASSERT_FALSE(logs.empty());
  for (const auto& log : logs) {
    EXPECT_GT(check_program(trace::read_trace_file(log), log), 0u);
  }
}

TEST(EqualVictimsTest, BuiltInModels) {
  for (const char* m : {"chain", "resnet", "densenet", "unet", "lstm",
                        "treelstm", "transformer"}) {
    std::string spec = std::string("model:") + m;
    EXPECT_GT(check_program(load_program(spec).program, spec), 0u);
  }
}

}  // namespace
}  // namespace dtr::sim
