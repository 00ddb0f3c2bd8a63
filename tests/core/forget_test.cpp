// Runtime::forget: pruning lineage the frontend can never need again, and
// recycling graph records so a steady loop keeps a flat graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/heuristics/dtr_eq.h"
#include "dtr/core/runtime.h"
#include "support/checked_executor.h"

namespace dtr {
namespace {

using testing::CheckedExecutor;

// A forward/backward-like iteration over a resident weight, with a view and
// a two-output op. Every value of an iteration is held until the next one
// starts, which releases and forgets all of them.
class TrainingLoop {
 public:
  TrainingLoop(const std::string& heuristic, DeallocPolicy policy,
               std::int64_t budget_bytes, bool check_every_call)
      : rt_({.budget_bytes = budget_bytes, .policy = policy},
            make_heuristic(heuristic), &ex_),
        check_(check_every_call) {
    w_ = rt_.add_constant(100, "w");
    ex_.first_compute(rt_.graph(), rt_.graph().tensor(w_).op);
  }

  /// Forgets the previous iteration (in creation order, so parents go
  /// before the ops reading them) and runs a new one.
  void step() {
    for (TensorId t : held_) {
      rt_.release(t);
      rt_.forget(t);
      if (check_) rt_.check_invariants();
    }
    held_.clear();
    TensorId x = rt_.add_constant(64, "x");
    ex_.first_compute(rt_.graph(), rt_.graph().tensor(x).op);
    held_.push_back(x);
    TensorId a1 = call("f1", {x, w_}, {{100, -1}});
    TensorId a2 = call("f2", {a1, w_}, {{100, -1}});
    TensorId v = call("view", {a2}, {{0, 0}});
    TensorId a3 = call("f3", {v}, {{100, -1}});
    TensorId p0 = call("split", {a3}, {{100, -1}, {50, -1}});
    TensorId loss = call("loss", {p0}, {{10, -1}});
    TensorId g3 = call("b3", {loss, a3}, {{100, -1}});
    TensorId g2 = call("b2", {g3, a2, p0 + 1}, {{100, -1}});
    TensorId g1 = call("b1", {g2, a1}, {{100, -1}});
    call("bw", {g1, x}, {{50, -1}});
    // The saved activations were evicted on the way: bring one back.
    rt_.materialize(a1);
    EXPECT_EQ(ex_.read(a1), ex_.truth(a1));
  }

  Runtime& rt() { return rt_; }
  const Graph& graph() const { return rt_.graph(); }

 private:
  TensorId call(const char* name, std::vector<TensorId> in,
                std::vector<OutputSpec> outs) {
    auto res = rt_.call(name, in, outs, /*cost_ns=*/10);
    ex_.first_compute(rt_.graph(), rt_.graph().tensor(res[0]).op);
    held_.insert(held_.end(), res.begin(), res.end());
    if (check_) rt_.check_invariants();
    return res[0];
  }

  CheckedExecutor ex_;
  Runtime rt_;
  bool check_;
  TensorId w_;
  std::vector<TensorId> held_;
};

struct GraphSize {
  std::size_t ops, tensors, storages, live_ops, live_tensors, live_storages;
};

GraphSize size_of(const Graph& g) {
  return {g.op_count(),      g.tensor_count(),      g.storage_count(),
          g.live_op_count(), g.live_tensor_count(), g.live_storage_count()};
}

void expect_no_larger(const GraphSize& now, const GraphSize& then) {
  EXPECT_LE(now.ops, then.ops);
  EXPECT_LE(now.tensors, then.tensors);
  EXPECT_LE(now.storages, then.storages);
  EXPECT_LE(now.live_ops, then.live_ops);
  EXPECT_LE(now.live_tensors, then.live_tensors);
  EXPECT_LE(now.live_storages, then.live_storages);
}

TEST(ForgetTest, LongTrainingLoopKeepsTheGraphFlat) {
  TrainingLoop loop("dtr", DeallocPolicy::kEager, 600, false);
  for (int i = 0; i < 10; ++i) loop.step();
  const GraphSize warm = size_of(loop.graph());
  // One iteration's records (11 ops, 13 tensors, 11 storages) plus the
  // weight: nothing older survives.
  EXPECT_LE(warm.live_ops, 12u);
  EXPECT_LE(warm.ops, 2 * 12u);
  for (int i = 0; i < 100000; ++i) {
    loop.step();
    if (i % 1000 == 0) {
      expect_no_larger(size_of(loop.graph()), warm);
      if (::testing::Test::HasFailure()) break;
    }
  }
  expect_no_larger(size_of(loop.graph()), warm);
  const RuntimeStats& s = loop.rt().stats();
  EXPECT_GT(s.evictions, 100000u);  // the budget forced evictions...
  EXPECT_GT(s.remat_ops, 100000u);  // ...and recomputation, values checked
  EXPECT_GT(s.forgotten_storages, 100000u * 10);
  EXPECT_LE(s.peak_bytes, 600);
  loop.rt().check_invariants();
}

TEST(ForgetTest, ForgettingOneOutputKeepsTheOpReplayable) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr"), &ex);
  TensorId x = rt.add_constant(10);
  ex.first_compute(rt.graph(), rt.graph().tensor(x).op);
  OutputSpec outs[] = {{100, -1}, {200, -1}};
  auto pair = rt.call("split", std::vector<TensorId>{x}, outs, 10);
  const TensorId p0 = pair[0], p1 = pair[1];
  const OpId op = rt.graph().tensor(p0).op;
  ex.first_compute(rt.graph(), op);
  const std::uint64_t p1_value = ex.read(p1);

  rt.release(p0);
  rt.forget(p0);
  rt.check_invariants();
  EXPECT_FALSE(rt.graph().op(op).dead);
  EXPECT_FALSE(rt.graph().tensor(p0).dead);
  EXPECT_TRUE(rt.graph().storage(rt.graph().tensor(p0).storage).banished);
  EXPECT_EQ(rt.stats().memory_bytes, 10 + 200);
  EXPECT_THROW(rt.materialize(p0), InvalidArgument);
  EXPECT_THROW(rt.retain(p0), InvalidArgument);
  EXPECT_THROW(rt.forget(p0), InvalidArgument);

  // The replay rebuilds both outputs; the forgotten one goes again at once.
  rt.evict_all();
  rt.materialize(p1);
  EXPECT_EQ(ex.read(p1), p1_value);
  EXPECT_EQ(ex.replays(), 1u);
  EXPECT_FALSE(ex.has(p0));
  EXPECT_EQ(rt.stats().memory_bytes, 10 + 200);
  rt.check_invariants();

  // p0's id is not reused while its op lives, whatever the arity.
  std::vector<TensorId> made;
  for (int i = 0; i < 4; ++i) {
    made.push_back(rt.call("one", std::vector<TensorId>{x},
                           std::vector<OutputSpec>{{1, -1}}, 1)[0]);
    auto two = rt.call("two", std::vector<TensorId>{x}, outs, 1);
    made.insert(made.end(), two.begin(), two.end());
  }
  EXPECT_EQ(std::count(made.begin(), made.end(), p0), 0);

  // Once the op dies, its two ids come back as a run, for a two-output op.
  const std::size_t live_ops = rt.graph().live_op_count();
  rt.release(p1);
  rt.forget(p1);
  EXPECT_TRUE(rt.graph().op(op).dead);
  EXPECT_EQ(rt.graph().live_op_count(), live_ops - 1);
  auto reused = rt.call("two", std::vector<TensorId>{x}, outs, 1);
  EXPECT_EQ(reused[0], p0);
  EXPECT_EQ(reused[1], p1);
  EXPECT_FALSE(rt.graph().tensor(p0).forgotten);
  rt.check_invariants();
}

TEST(ForgetTest, ForgottenTensorWithALiveAliasKeepsItsStorage) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr-eq"), &ex);
  TensorId x = rt.add_constant(10);
  ex.first_compute(rt.graph(), rt.graph().tensor(x).op);
  TensorId t = rt.call("f", std::vector<TensorId>{x},
                       std::vector<OutputSpec>{{100, -1}}, 10)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(t).op);
  TensorId v = rt.call("view", std::vector<TensorId>{t},
                       std::vector<OutputSpec>{{0, 0}}, 1)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(v).op);
  const StorageId s = rt.graph().tensor(t).storage;
  const std::size_t ops = rt.graph().live_op_count();

  rt.release(t);
  rt.forget(t);
  rt.check_invariants();
  EXPECT_TRUE(rt.is_defined(v));
  EXPECT_FALSE(rt.graph().storage(s).banished);
  EXPECT_EQ(rt.stats().memory_bytes, 10 + 100);
  EXPECT_EQ(rt.stats().forgotten_storages, 0u);
  EXPECT_EQ(rt.graph().live_op_count(), ops);  // f is v's lineage

  // Still recomputable through the forgotten root.
  const std::uint64_t value = ex.read(v);
  rt.evict_all();
  rt.materialize(v);
  EXPECT_EQ(ex.read(v), value);

  rt.release(v);
  rt.forget(v);
  rt.check_invariants();
  EXPECT_EQ(rt.stats().forgotten_storages, 1u);
  EXPECT_EQ(rt.stats().memory_bytes, 10);
  EXPECT_EQ(rt.graph().live_op_count(), ops - 2);
  EXPECT_TRUE(rt.graph().storage(s).dead);
}

TEST(ForgetTest, ForgetRejectsHeldLockedAndUnknownTensors) {
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(10);
  TensorId a = rt.call("a", std::vector<TensorId>{x},
                       std::vector<OutputSpec>{{100, -1}}, 10)[0];
  try {
    rt.forget(a);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("release() them first"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(rt.graph().tensor(a).forgotten);

  rt.release(a);
  const std::vector<TensorId> in{a};
  rt.begin_call(in);  // a pending call holds a
  EXPECT_THROW(rt.forget(a), InvalidArgument);
  rt.abort_call(in);
  rt.forget(a);
  EXPECT_THROW(rt.forget(a), InvalidArgument);
  EXPECT_THROW(rt.forget(12345), InvalidArgument);
  EXPECT_THROW(rt.call("b", in, std::vector<OutputSpec>{{1, -1}}, 1),
               InvalidArgument);
  rt.check_invariants();
}

TEST(ForgetTest, ForgottenConstantIsFreedOnceNothingReadsIt) {
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr"));
  TensorId c = rt.add_constant(300);
  TensorId a = rt.call("a", std::vector<TensorId>{c},
                       std::vector<OutputSpec>{{100, -1}}, 10)[0];
  rt.release(c);
  rt.forget(c);
  EXPECT_EQ(rt.stats().memory_bytes, 100);  // freed, a is pinned instead
  EXPECT_TRUE(rt.graph().storage(rt.graph().tensor(a).storage).pinned);
  EXPECT_FALSE(rt.graph().tensor(c).dead);  // a's op still names it
  rt.release(a);
  rt.forget(a);
  EXPECT_TRUE(rt.graph().tensor(c).dead);
  EXPECT_EQ(rt.stats().memory_bytes, 0);
  EXPECT_EQ(rt.graph().live_op_count(), 0u);
  EXPECT_EQ(rt.graph().live_storage_count(), 0u);
  rt.check_invariants();
}

struct LoopCase {
  std::string heuristic;
  DeallocPolicy policy;
};

class ForgetHeuristicTest : public ::testing::TestWithParam<LoopCase> {};

// Scores of the exact heuristics must equal a fresh instance's, which has
// no cache: a stale cache about a recycled id would show here.
void expect_fresh_scores(Runtime& rt, const std::string& name) {
  if (name != "dtr" && name != "msps") return;
  auto fresh = make_heuristic(name);
  const Graph& g = rt.graph();
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    fresh->on_storage_created(g, s);
  }
  std::vector<StorageId> pooled;
  for (StorageId s = 0; s < g.storage_count(); ++s) {
    if (rt.graph().storage(s).pool_slot != kNoId) pooled.push_back(s);
  }
  for (StorageId s : pooled) {
    EXPECT_EQ(rt.score(s), fresh->score(g, s, rt.stats().clock_ns))
        << "storage " << s;
  }
}

TEST_P(ForgetHeuristicTest, NoHeuristicTouchesRecycledRecords) {
  const LoopCase& c = GetParam();
  // Random victims need more slack to avoid running out of memory.
  const std::int64_t budget = c.heuristic == "random" ? 800 : 600;
  TrainingLoop loop(c.heuristic, c.policy, budget, /*check_every_call=*/true);
  GraphSize warm{};
  auto* eq = dynamic_cast<const DtrEqHeuristic*>(&loop.rt().heuristic());
  for (int i = 0; i < 3000; ++i) {
    loop.step();
    if (i == 20) warm = size_of(loop.graph());
    if (i % 100 == 0) expect_fresh_scores(loop.rt(), c.heuristic);
    if (::testing::Test::HasFailure()) break;
  }
  expect_no_larger(size_of(loop.graph()), warm);
  if (eq) {
    EXPECT_LE(eq->node_count(), 2 * loop.graph().storage_count() + 1024);
  }
  EXPECT_GT(loop.rt().stats().remat_ops, 0u);
  EXPECT_GT(loop.rt().stats().evictions, 0u);
}

std::vector<LoopCase> loop_cases() {
  std::vector<LoopCase> cases;
  for (const auto& h : heuristic_names()) {
    for (DeallocPolicy p : {DeallocPolicy::kEager, DeallocPolicy::kIgnore,
                            DeallocPolicy::kBanish}) {
      cases.push_back({h, p});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllHeuristicsPolicies, ForgetHeuristicTest,
                         ::testing::ValuesIn(loop_cases()),
                         [](const ::testing::TestParamInfo<LoopCase>& info) {
                           std::string name =
                               info.param.heuristic + "_" +
                               std::string(to_string(info.param.policy));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace dtr
