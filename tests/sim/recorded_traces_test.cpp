// The traces this repository ships (data/traces, recorded by the LibTorch
// layer with `dtr train --record`): the manifest names every example model,
// each trace reads, and DTR replays it under half its peak within budget.
#include <gtest/gtest.h>

#include <set>

#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"

namespace dtr::sim {
namespace {

const std::string kManifest = DTR_DATA_DIR "/traces/manifest.json";

TEST(RecordedTracesTest, EveryExampleModelReplaysUnderHalfItsPeak) {
  const auto specs = expand_program_specs({kManifest});
  std::set<std::string> names;
  for (const auto& spec : specs) {
    SCOPED_TRACE(spec);
    NamedProgram np = load_program(spec);
    names.insert(np.name);
    const Baseline base = compute_baseline(np.program);
    EXPECT_GT(base.peak_bytes, 0);
    EXPECT_EQ(base.constant_bytes, 0);  // inputs are outside the budget
    SimConfig config;
    config.heuristic = "dtr";
    config.budget_ratio = 0.5;
    config.thrash_limit = 1e9;
    const SimResult r = simulate(np.program, base, config);
    EXPECT_EQ(r.status, SimStatus::kOk) << r.message;
    EXPECT_LE(r.peak_bytes, r.budget_bytes);
    EXPECT_GE(r.overhead, 1.0);
  }
  EXPECT_EQ(names.size(), 7u);
}

}  // namespace
}  // namespace dtr::sim
