// ProfileRecorder (dtr/trace/profile_recorder.h) on a core Runtime: the
// written profile nests each replay under the access that caused it, on
// the runtime's clock, marks every eviction with its score, and its memory
// counter is the runtime's resident bytes, within the budget.
#include "dtr/trace/profile_recorder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"
#include "support/chrome_trace_json.h"
#include "support/temp_dir.h"

namespace dtr::trace {
namespace {

using dtr::testing::events;
using dtr::testing::read_profile;
using dtr::testing::spans;
using dtr::testing::TempDir;

// x -> f1 -> ... -> fn (100 bytes, cost 10 * i), intermediates released.
std::vector<TensorId> evicted_chain(Runtime& rt, int n) {
  std::vector<TensorId> t{rt.add_constant(10)};
  for (int i = 1; i <= n; ++i) {
    const OutputSpec out{100, -1};
    const TensorId in[] = {t.back()};
    t.push_back(rt.call("f" + std::to_string(i), in, {&out, 1}, 10 * i)[0]);
    if (i > 1) rt.release(t[i - 1]);
  }
  return t;
}

TEST(ProfileRecorderTest, ReplaysNestInsideTheOpThatNeededThem) {
  TempDir dir;
  const std::string path = (dir / "p.json").string();
  Runtime rt({}, make_heuristic("dtr"));
  const std::vector<TensorId> t = evicted_chain(rt, 4);  // f1..f3 evicted
  ProfileRecorder profile(path, ProfileClock::kRuntime, "test");
  rt.set_observer(&profile);
  const std::int64_t start = rt.stats().clock_ns;
  const OutputSpec out{100, -1};
  const TensorId in[] = {t[3]};
  rt.call("g", in, {&out, 1}, 5);
  rt.set_observer(nullptr);
  profile.close();

  const nlohmann::json j = read_profile(path);
  const auto ops = spans(j, "op");
  const auto replays = spans(j, "replay");
  ASSERT_EQ(ops.size(), 1u);
  ASSERT_EQ(replays.size(), 3u);  // f3, which needs f2, which needs f1
  const auto& g = ops[0];
  EXPECT_EQ(g.name, "g");
  // Simulated time: replays 10 + 20 + 30, then g's own 5.
  EXPECT_EQ(g.begin_ns, start);
  EXPECT_EQ(g.end_ns, start + 60 + 5);
  // Written parents first (they all start together): g, then f3, which
  // holds f2, which holds f1.
  const auto all = spans(j);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].name, "g");
  EXPECT_EQ(replays[0].name, "f3");
  EXPECT_EQ(replays[1].name, "f2");
  EXPECT_EQ(replays[2].name, "f1");
  EXPECT_EQ(replays[0].end_ns - replays[0].begin_ns, 60);
  EXPECT_EQ(replays[2].end_ns - replays[2].begin_ns, 10);
  EXPECT_TRUE(g.contains(replays[0]));
  EXPECT_TRUE(replays[0].contains(replays[1]));
  EXPECT_TRUE(replays[1].contains(replays[2]));
  EXPECT_LT(replays[0].end_ns, g.end_ns);
  EXPECT_EQ(replays[0].args["tensor"], t[3]);
  EXPECT_EQ(replays[0].args["completed"], 1);
}

TEST(ProfileRecorderTest, EvictionsCarryScoresAndMemoryStaysInBudget) {
  TempDir dir;
  const std::string path = (dir / "p.json").string();
  constexpr std::int64_t kBudget = 700;
  Runtime rt({.budget_bytes = kBudget}, make_heuristic("dtr"));
  ProfileRecorder profile(path, ProfileClock::kRuntime, "test");
  rt.set_observer(&profile);
  // Values of x alone, read again later: shallow replays, many evictions.
  const TensorId x[] = {rt.add_constant(10)};
  std::vector<TensorId> v;
  for (int i = 0; i < 20; ++i) {
    const OutputSpec out{100, -1};
    v.push_back(rt.call("f", x, {&out, 1}, 10)[0]);
    if (i >= 4) {
      const TensorId in[] = {v[i - 4], v[i - 1]};
      rt.release(rt.call("g", in, {&out, 1}, 5)[0]);
    }
  }
  profile.close();
  const RuntimeStats& s = rt.stats();
  ASSERT_GT(s.evictions, 0u);
  ASSERT_GT(s.remat_ops, 0u);

  const nlohmann::json j = read_profile(path);
  const auto chosen = events(j, "i", "evict");
  ASSERT_EQ(chosen.size(), s.evictions);
  for (const auto& e : chosen) {
    EXPECT_EQ(e["cat"], "eviction");
    ASSERT_TRUE(e["args"]["score"].is_number()) << e.dump();
    EXPECT_EQ(e["args"]["bytes"], 100);
    EXPECT_TRUE(e["args"].contains("storage"));
  }
  EXPECT_EQ(events(j, "i", "eager evict").size(), s.eager_evictions);
  EXPECT_EQ(spans(j, "replay").size(), s.remat_ops);
  EXPECT_EQ(spans(j, "op").size(), 36u);
  const auto memory = events(j, "C", "dtr bytes");
  ASSERT_FALSE(memory.empty());
  std::int64_t peak = 0;
  for (const auto& c : memory) {
    const std::int64_t bytes = c["args"]["dtr_bytes"];
    EXPECT_LE(bytes, kBudget);
    peak = std::max(peak, bytes);
  }
  EXPECT_EQ(peak, s.peak_bytes);
  EXPECT_EQ(memory.back()["args"]["dtr_bytes"], s.memory_bytes);
  // Every replay lies inside some op span: a call's access caused it.
  const auto ops = spans(j, "op");
  for (const auto& r : spans(j, "replay")) {
    bool inside = false;
    for (const auto& o : ops) inside = inside || o.contains(r);
    EXPECT_TRUE(inside) << r.name << " at " << r.begin_ns;
  }
}

TEST(ProfileRecorderTest, AnUnwritablePathIsAnErrorNamingIt) {
  TempDir dir;
  const std::string path = (dir / "missing" / "p.json").string();
  try {
    ProfileRecorder profile(path, ProfileClock::kWall, "test");
    FAIL() << "opened " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtr::trace
