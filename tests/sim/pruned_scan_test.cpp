// Note [Pruned region scan], Note [Lazy costs]: the fast scan and the index
// of "dtr" and "msps" pick the reference scan's victims
// (equal_victims_test.cpp checks every choice) while reading a fraction of
// the storages the scan reads: most candidates lose on a bound, or part-way
// through their walk. (Before bounds, the index read 83-94 % of the scan's.)
#include <gtest/gtest.h>

#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"

namespace dtr::sim {
namespace {

SimResult run(const trace::Program& p, const Baseline& base, const char* h,
              ChoiceMode mode) {
  SimConfig config;
  config.heuristic = h;
  config.budget_ratio = 0.3;
  config.choice = mode;
  return simulate(p, base, config);
}

TEST(PrunedScanTest, SameRunForAFractionOfTheReads) {
  for (const char* model : {"model:lstm", "model:treelstm"}) {
    const trace::Program p = load_program(model).program;
    const Baseline base = compute_baseline(p);
    for (const char* h : {"dtr", "msps"}) {
      SCOPED_TRACE(std::string(model) + " " + h);
      const SimResult scan = run(p, base, h, ChoiceMode::kScan);
      ASSERT_GT(scan.evictions, 100u);
      for (ChoiceMode mode : {ChoiceMode::kFastScan, ChoiceMode::kIndex}) {
        const SimResult fast = run(p, base, h, mode);
        EXPECT_EQ(fast.evictions, scan.evictions);
        EXPECT_EQ(fast.remats, scan.remats);
        EXPECT_EQ(fast.final_clock_ns, scan.final_clock_ns);
        EXPECT_LT(fast.metadata_accesses * 3, scan.metadata_accesses);
      }
    }
  }
}

}  // namespace
}  // namespace dtr::sim
