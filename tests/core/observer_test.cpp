// The profiling hook (dtr/core/observer.h): what the Runtime reports, in
// what order, and that observing changes nothing; and the two wall-time
// figures of RuntimeStats.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"
#include "support/checked_executor.h"

namespace dtr {
namespace {

// Logs every hook as one line: "op(", "op) f3", "replay( 4", "replay) 4",
// "evict 2 score", "eager 2", with memory and budget checks on the side.
class LogObserver : public RuntimeObserver {
 public:
  explicit LogObserver(Runtime* rt = nullptr) : rt_(rt) {}
  void on_op_begin(std::int64_t) override { log.push_back("op("); }
  void on_op_end(const Graph& g, OpId op, bool completed,
                 std::int64_t) override {
    log.push_back(std::string(completed ? "op) " : "op-failed) ") +
                  std::string(g.op(op).name));
  }
  void on_replay_begin(const Graph&, TensorId t, std::int64_t) override {
    log.push_back("replay( " + std::to_string(t));
  }
  void on_replay_end(const Graph&, TensorId t, bool completed,
                     std::int64_t) override {
    log.push_back((completed ? "replay) " : "replay-failed) ") +
                  std::to_string(t));
  }
  void on_evicted(const Graph& g, const EvictionEvent& e) override {
    EXPECT_EQ(e.bytes, g.storage(e.storage).bytes);
    EXPECT_FALSE(g.storage(e.storage).resident);
    if (e.eager) {
      EXPECT_TRUE(std::isnan(e.score));
      log.push_back("eager " + std::to_string(e.storage));
    } else {
      EXPECT_TRUE(std::isfinite(e.score)) << e.score;
      scores.push_back(e.score);
      log.push_back("evict " + std::to_string(e.storage));
    }
  }
  void on_memory_changed(std::int64_t bytes, std::int64_t) override {
    if (rt_ != nullptr) {
      EXPECT_EQ(bytes, rt_->stats().memory_bytes);
    }
    memory.push_back(bytes);
  }
  std::vector<std::string> log;
  std::vector<double> scores;
  std::vector<std::int64_t> memory;

 private:
  Runtime* rt_;
};

// x -> t1 -> t2 -> t3 (100 bytes each), intermediates released: evicted.
std::vector<TensorId> chain(Runtime& rt, int n) {
  std::vector<TensorId> t{rt.add_constant(10)};
  for (int i = 1; i <= n; ++i) {
    const OutputSpec out{100, -1};
    const TensorId in[] = {t.back()};
    t.push_back(rt.call("f" + std::to_string(i), in, {&out, 1}, 10)[0]);
    if (i > 1) rt.release(t[i - 1]);
  }
  return t;
}

TEST(ObserverTest, ReplaysNestInsideTheCallThatNeededThem) {
  Runtime rt({}, make_heuristic("dtr"));
  const std::vector<TensorId> t = chain(rt, 3);
  LogObserver obs(&rt);
  rt.set_observer(&obs);
  const OutputSpec out{100, -1};
  const TensorId in[] = {t[2]};  // evicted (eager): t1 is too
  rt.call("g", in, {&out, 1}, 10);
  const std::vector<std::string> want = {"op(",
                                         "replay( " + std::to_string(t[2]),
                                         "replay( " + std::to_string(t[1]),
                                         "replay) " + std::to_string(t[1]),
                                         "replay) " + std::to_string(t[2]),
                                         "op) g"};
  std::vector<std::string> spans;
  for (const auto& e : obs.log) {
    if (e.rfind("op", 0) == 0 || e.rfind("replay", 0) == 0) spans.push_back(e);
  }
  EXPECT_EQ(spans, want);
  EXPECT_FALSE(obs.memory.empty());
}

TEST(ObserverTest, ChosenEvictionsCarryTheHeuristicsScore) {
  Runtime rt({.budget_bytes = 250}, make_heuristic("lru"));
  LogObserver obs(&rt);
  rt.set_observer(&obs);
  std::vector<TensorId> t{rt.add_constant(10)};
  for (int i = 1; i <= 5; ++i) {  // keeps every handle: budget evictions
    const OutputSpec out{100, -1};
    const TensorId in[] = {t.back()};
    t.push_back(rt.call("f", in, {&out, 1}, 10)[0]);
  }
  EXPECT_EQ(obs.scores.size(), rt.stats().evictions);
  ASSERT_FALSE(obs.scores.empty());
  for (std::int64_t m : obs.memory) EXPECT_LE(m, 250);
}

// The observer sees the run; it must not steer it.
TEST(ObserverTest, ObservingChangesNoDecision) {
  auto run = [](bool observe) {
    Runtime rt({.budget_bytes = 700}, make_heuristic("dtr"));
    LogObserver obs;
    if (observe) rt.set_observer(&obs);
    // Values of x alone, read again later: shallow replays, many choices.
    const TensorId x[] = {rt.add_constant(10)};
    std::vector<TensorId> v;
    for (int i = 0; i < 40; ++i) {
      const OutputSpec out{100 + 10 * (i % 3), -1};
      v.push_back(rt.call("f", x, {&out, 1}, 10 + i % 7)[0]);
      if (i >= 4) {
        const TensorId in[] = {v[i - 4], v[i - 1]};
        rt.release(rt.call("g", in, {&out, 1}, 5)[0]);
      }
    }
    const RuntimeStats s = rt.stats();
    return std::vector<std::uint64_t>{s.evictions, s.remat_ops,
                                      static_cast<std::uint64_t>(s.clock_ns)};
  };
  const std::vector<std::uint64_t> plain = run(false);
  ASSERT_GT(plain[0], 0u);  // evictions
  ASSERT_GT(plain[1], 0u);  // replays
  EXPECT_EQ(run(true), plain);
}

class FailingExecutor : public testing::CheckedExecutor {
 public:
  void replay(const Graph&, OpId) override {
    throw std::runtime_error("injected");
  }
};

TEST(ObserverTest, AFailedReplayStillClosesItsSpans) {
  FailingExecutor ex;
  Runtime rt({}, make_heuristic("dtr"), &ex);
  std::vector<TensorId> t{rt.add_constant(10)};
  for (int i = 1; i <= 3; ++i) {
    const OutputSpec out{100, -1};
    const TensorId in[] = {t.back()};
    t.push_back(rt.call("f" + std::to_string(i), in, {&out, 1}, 10)[0]);
    if (i > 1) rt.release(t[i - 1]);
  }
  LogObserver obs;
  rt.set_observer(&obs);
  const OutputSpec out{100, -1};
  const TensorId in[] = {t[2]};
  EXPECT_THROW(rt.call("g", in, {&out, 1}, 10), RematerializationError);
  int depth = 0;
  for (const auto& e : obs.log) {
    if (e.find('(') != std::string::npos) ++depth;
    if (e.find(')') != std::string::npos) --depth;
    EXPECT_GE(depth, 0) << e;
  }
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(obs.log.back(), "op-failed) g");
}

TEST(ObserverTest, WallTimesOfChoosingAndReplayingAreCounted) {
  testing::CheckedExecutor ex;
  Runtime rt({.budget_bytes = 250}, make_heuristic("dtr"), &ex);
  EXPECT_EQ(rt.stats().choose_wall_ns, 0);
  EXPECT_EQ(rt.stats().replay_wall_ns, 0);
  std::vector<TensorId> t{rt.add_constant(10)};
  ex.first_compute(rt.graph(), rt.graph().tensor(t[0]).op);
  for (int i = 1; i <= 5; ++i) {
    const OutputSpec out{100, -1};
    const TensorId in[] = {t.back()};
    t.push_back(rt.call("f", in, {&out, 1}, 10)[0]);
    ex.first_compute(rt.graph(), rt.graph().tensor(t.back()).op);
  }
  ASSERT_GT(rt.stats().evictions, 0u);
  EXPECT_GT(rt.stats().choose_wall_ns, 0);
  TensorId evicted = kNoId;
  for (TensorId u : t) {
    if (!rt.is_defined(u)) evicted = u;
  }
  ASSERT_NE(evicted, kNoId);
  rt.materialize(evicted);  // replayed
  ASSERT_GT(rt.stats().remat_ops, 0u);
  EXPECT_GT(rt.stats().replay_wall_ns, 0);
}

}  // namespace
}  // namespace dtr
