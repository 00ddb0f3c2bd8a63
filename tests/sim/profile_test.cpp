// A simulated run with a profile (SimConfig::observer, as `dtr sim
// --profile` sets it): the profile shows every operator, replay and
// eviction of the run on the simulated clock, never more resident bytes
// than the budget, and recording it changes no decision.
#include <gtest/gtest.h>

#include <string>

#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/profile_recorder.h"
#include "support/chrome_trace_json.h"
#include "support/temp_dir.h"

namespace dtr::sim {
namespace {

using dtr::testing::events;
using dtr::testing::read_profile;
using dtr::testing::spans;
using dtr::testing::TempDir;

TEST(SimProfileTest, ProfileOfABuiltInModelMatchesTheRun) {
  TempDir dir;
  const std::string path = (dir / "p.json").string();
  const NamedProgram p = load_program("model:lstm");
  const Baseline baseline = compute_baseline(p.program);
  SimConfig config;
  config.heuristic = "dtr-eq";
  config.budget_ratio = 0.5;
  const SimResult plain = simulate(p.program, baseline, config);

  trace::ProfileRecorder profile(path, trace::ProfileClock::kRuntime, p.name);
  config.observer = &profile;
  const SimResult r = simulate(p.program, baseline, config);
  profile.close();
  ASSERT_EQ(r.status, SimStatus::kOk) << r.message;
  ASSERT_GT(r.evictions, 0u);
  ASSERT_GT(r.remats, 0u);
  EXPECT_EQ(r.evictions, plain.evictions);
  EXPECT_EQ(r.remats, plain.remats);
  EXPECT_EQ(r.remat_compute_ns, plain.remat_compute_ns);

  const nlohmann::json j = read_profile(path);
  const auto ops = spans(j, "op");
  const auto replays = spans(j, "replay");
  EXPECT_EQ(replays.size(), r.remats);
  const auto chosen = events(j, "i", "evict");
  EXPECT_EQ(chosen.size(), r.evictions);
  for (const auto& e : chosen) {
    ASSERT_TRUE(e["args"]["score"].is_number()) << e.dump();
  }
  for (const auto& c : events(j, "C", "dtr bytes")) {
    ASSERT_LE(c["args"]["dtr_bytes"].get<std::int64_t>(), r.budget_bytes);
  }
  // Spans are written parents first: each replay lies in the last op span
  // written before it (the call whose access caused it). Simulated time
  // adds up.
  std::int64_t op_time = 0, replay_time = 0;
  for (const auto& o : ops) op_time += o.end_ns - o.begin_ns;
  const auto all = spans(j);
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k].category != "replay") continue;
    std::size_t m = k;
    while (m > 0 && all[m].category != "op") --m;
    ASSERT_EQ(all[m].category, "op") << "replay before the first op";
    EXPECT_TRUE(all[m].contains(all[k]))
        << all[k].name << " not in " << all[m].name;
  }
  for (const auto& s : replays) replay_time += s.end_ns - s.begin_ns;
  EXPECT_EQ(op_time, r.model_compute_ns + r.remat_compute_ns);
  EXPECT_GE(replay_time, r.remat_compute_ns);  // nested replays count twice
}

}  // namespace
}  // namespace dtr::sim
