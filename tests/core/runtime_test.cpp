#include "dtr/core/runtime.h"

#include <gtest/gtest.h>

#include "dtr/core/error.h"
#include "support/checked_executor.h"

namespace dtr {
namespace {

using testing::CheckedExecutor;

std::span<const TensorId> call1(Runtime& rt, const char* name,
                                std::vector<TensorId> in, std::int64_t bytes,
                                std::int64_t cost = 10) {
  OutputSpec out{bytes, -1};
  return rt.call(name, in, {&out, 1}, cost);
}

TEST(RuntimeTest, ConstantsArePinnedAndCounted) {
  Runtime rt({.budget_bytes = 1000}, make_heuristic("dtr"));
  TensorId c = rt.add_constant(300);
  EXPECT_TRUE(rt.is_defined(c));
  EXPECT_EQ(rt.stats().memory_bytes, 300);
  EXPECT_EQ(rt.stats().constant_bytes, 300);
  EXPECT_EQ(rt.evictable_bytes(), 0);
  rt.release(c);  // eager policy never frees a constant
  EXPECT_TRUE(rt.is_defined(c));
  rt.check_invariants();
}

TEST(RuntimeTest, EvictsBeforeAllocatingSoTheBudgetHolds) {
  Runtime rt({.budget_bytes = 250}, make_heuristic("lru"));
  TensorId x = rt.add_constant(50);
  TensorId a = call1(rt, "a", {x}, 100)[0];
  TensorId b = call1(rt, "b", {a}, 100)[0];
  // c needs 100 more: a (the least recently used evictable) must go first.
  TensorId c = call1(rt, "c", {b}, 100)[0];
  EXPECT_FALSE(rt.is_defined(a));
  EXPECT_TRUE(rt.is_defined(b));
  EXPECT_TRUE(rt.is_defined(c));
  EXPECT_LE(rt.stats().peak_bytes, 250);
  EXPECT_EQ(rt.stats().evictions, 1u);
  rt.check_invariants();
}

TEST(RuntimeTest, RematerializationRecomputesParentsRecursively) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr"), &ex);
  TensorId x = rt.add_constant(10);
  ex.first_compute(rt.graph(), rt.graph().tensor(x).op);
  std::vector<TensorId> chain{x};
  for (int i = 0; i < 5; ++i) {
    chain.push_back(call1(rt, "f", {chain.back()}, 100)[0]);
    ex.first_compute(rt.graph(), rt.graph().tensor(chain.back()).op);
  }
  std::uint64_t last = ex.read(chain.back());
  rt.set_budget(10 + 100);  // only the constant and one value fit
  TensorId y = call1(rt, "g", {x}, 100)[0];  // evicts the whole chain
  ex.first_compute(rt.graph(), rt.graph().tensor(y).op);
  EXPECT_FALSE(rt.is_defined(chain.back()));
  rt.release(y);
  rt.set_budget(10 + 200);  // a value and its parent fit, nothing more
  rt.materialize(chain.back());
  EXPECT_EQ(ex.read(chain.back()), last);  // bit-identical after recompute
  EXPECT_EQ(rt.stats().remat_ops, 5u);
  EXPECT_LE(rt.stats().memory_bytes, 210);
  rt.check_invariants();
}

TEST(RuntimeTest, OutOfMemoryNamesTheBytesAndLeavesTheRuntimeUsable) {
  Runtime rt({.budget_bytes = 100}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(60);
  try {
    call1(rt, "too_big", {x}, 50);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.needed_bytes(), 50);
    EXPECT_EQ(e.evictable_bytes(), 0);
    EXPECT_EQ(e.used_bytes(), 60);
    EXPECT_EQ(e.budget_bytes(), 100);
    EXPECT_NE(std::string(e.what()).find("50"), std::string::npos);
  }
  rt.check_invariants();
  EXPECT_EQ(rt.stats().ops, 1u);  // the failed call left nothing behind
  rt.set_budget(200);
  TensorId y = call1(rt, "fits", {x}, 50)[0];
  EXPECT_TRUE(rt.is_defined(y));
  rt.check_invariants();
}

TEST(RuntimeTest, OutOfMemoryDuringRematerializationReleasesItsLocks) {
  Runtime rt({.budget_bytes = 1000}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(100);
  TensorId a = call1(rt, "a", {x}, 400)[0];
  TensorId b = call1(rt, "b", {a}, 400)[0];
  rt.release(a);  // evicted at once (eager), b still needs it to recompute
  rt.set_budget(1000);
  TensorId c = call1(rt, "c", {b}, 400)[0];
  rt.release(c);
  // Force b out, then ask for b with a budget too small for a + b.
  rt.set_budget(500);
  TensorId d = call1(rt, "d", {x}, 350)[0];
  EXPECT_FALSE(rt.is_defined(b));
  rt.release(d);
  rt.set_budget(550);
  EXPECT_THROW(rt.materialize(b), OutOfMemory);
  rt.check_invariants();  // no lock is left behind
  rt.set_budget(1000);
  rt.materialize(b);
  EXPECT_TRUE(rt.is_defined(b));
  rt.check_invariants();
}

TEST(RuntimeTest, MultiOutputOpsAreRecomputedTogether) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 1000}, make_heuristic("lru"), &ex);
  TensorId x = rt.add_constant(10);
  ex.first_compute(rt.graph(), rt.graph().tensor(x).op);
  OutputSpec outs[] = {{100, -1}, {200, -1}};
  auto pair = rt.call("split", std::vector<TensorId>{x}, outs, 7);
  ex.first_compute(rt.graph(), rt.graph().tensor(pair[0]).op);
  std::uint64_t v0 = ex.read(pair[0]), v1 = ex.read(pair[1]);
  rt.release(pair[0]);
  rt.release(pair[1]);  // both evicted eagerly, still recomputable
  EXPECT_FALSE(rt.is_defined(pair[0]));
  EXPECT_EQ(rt.stats().memory_bytes, 10);
  rt.materialize(pair[1]);
  // One replay brings both outputs back.
  EXPECT_TRUE(rt.is_defined(pair[0]));
  EXPECT_EQ(ex.read(pair[0]), v0);
  EXPECT_EQ(ex.read(pair[1]), v1);
  EXPECT_EQ(ex.replays(), 1u);
  EXPECT_EQ(rt.stats().memory_bytes, 310);
  rt.check_invariants();
}

TEST(RuntimeTest, DuplicateSiblingsAreNotDoubleCounted) {
  Runtime rt({.budget_bytes = 1000}, make_heuristic("lru"));
  TensorId x = rt.add_constant(10);
  OutputSpec outs[] = {{100, -1}, {200, -1}};
  auto pair = rt.call("split", std::vector<TensorId>{x}, outs, 7);
  rt.release(pair[0]);  // only the first is evicted
  rt.materialize(pair[0]);
  // The replay recomputed the resident sibling too and freed the copy.
  EXPECT_EQ(rt.stats().memory_bytes, 310);
  EXPECT_EQ(rt.stats().peak_bytes, 510);
  rt.check_invariants();
}

TEST(RuntimeTest, AliasesShareTheirStorageAndAreRebuiltAfterEviction) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 1000}, make_heuristic("lru"), &ex);
  TensorId x = rt.add_constant(10);
  ex.first_compute(rt.graph(), rt.graph().tensor(x).op);
  TensorId a = call1(rt, "a", {x}, 300)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(a).op);
  OutputSpec view{0, 0};
  TensorId v = rt.call("view", std::vector<TensorId>{a}, {&view, 1}, 1)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(v).op);
  const Graph& g = rt.graph();
  EXPECT_EQ(g.tensor(v).storage, g.tensor(a).storage);
  EXPECT_EQ(rt.stats().memory_bytes, 310);  // a view costs no bytes
  EXPECT_EQ(g.storage(g.tensor(a).storage).compute_ns, 11);  // a + view
  rt.release(a);
  EXPECT_TRUE(rt.is_defined(a));  // the view still holds the storage
  rt.release(v);
  EXPECT_FALSE(rt.is_defined(v));  // evicting the storage kills every view
  rt.retain(v);
  rt.materialize(v);  // recomputes a, then the view
  EXPECT_TRUE(rt.is_defined(v));
  EXPECT_EQ(ex.read(v), ex.truth(v));
  rt.check_invariants();
}

TEST(RuntimeTest, LockedInputsAreNeverEvictedForTheirOwnOp) {
  Runtime rt({.budget_bytes = 300}, make_heuristic("size"));
  TensorId x = rt.add_constant(10);
  TensorId a = call1(rt, "a", {x}, 190)[0];
  // b reads a; a is the only evictable storage, but it is locked.
  EXPECT_THROW(call1(rt, "b", {a}, 150), OutOfMemory);
  EXPECT_TRUE(rt.is_defined(a));
  rt.check_invariants();
}

TEST(RuntimeTest, PinnedStoragesAreNeverEvicted) {
  Runtime rt({.budget_bytes = 300}, make_heuristic("lru"));
  TensorId x = rt.add_constant(10);
  TensorId a = call1(rt, "a", {x}, 150)[0];
  rt.pin(a);
  EXPECT_THROW(call1(rt, "b", {x}, 150), OutOfMemory);
  EXPECT_TRUE(rt.is_defined(a));
  rt.check_invariants();
}

TEST(RuntimeTest, IgnorePolicyKeepsReleasedValuesUntilEvicted) {
  Runtime rt({.budget_bytes = 1000, .policy = DeallocPolicy::kIgnore},
             make_heuristic("lru"));
  TensorId x = rt.add_constant(10);
  TensorId a = call1(rt, "a", {x}, 300)[0];
  rt.release(a);
  EXPECT_TRUE(rt.is_defined(a));
  EXPECT_EQ(rt.stats().eager_evictions, 0u);
  rt.check_invariants();
}

TEST(RuntimeTest, BanishWaitsForEvictedDependentsThenPinsChildren) {
  Runtime rt({.budget_bytes = 1000, .policy = DeallocPolicy::kBanish},
             make_heuristic("lru"));
  TensorId x = rt.add_constant(10);
  TensorId a = call1(rt, "a", {x}, 300)[0];
  TensorId b = call1(rt, "b", {a}, 300)[0];
  TensorId c = call1(rt, "c", {b}, 300)[0];
  rt.set_budget(700);
  TensorId d = call1(rt, "d", {c}, 50)[0];  // evicts a (the oldest)
  EXPECT_FALSE(rt.is_defined(a));
  rt.set_budget(1000);
  // b's only child c is resident, so b can be freed for good at once.
  rt.release(b);
  EXPECT_EQ(rt.stats().banishments, 1u);
  EXPECT_TRUE(rt.graph().storage(rt.graph().tensor(c).storage).pinned);
  EXPECT_THROW(rt.materialize(b), InvalidArgument);  // gone for good
  rt.release(d);
  rt.check_invariants();
}

TEST(RuntimeTest, ConstantsAreFreedByBanishing) {
  Runtime rt({.policy = DeallocPolicy::kBanish}, make_heuristic("lru"));
  TensorId x = rt.add_constant(100);
  rt.release(x);
  EXPECT_EQ(rt.stats().memory_bytes, 0);
  EXPECT_EQ(rt.stats().banishments, 1u);
  rt.check_invariants();
}

TEST(RuntimeTest, RematLimitStopsThrashingAndKeepsState) {
  Runtime rt({.budget_bytes = 250, .remat_limit_ns = 15},
             make_heuristic("lru"));
  TensorId x = rt.add_constant(50);
  TensorId a = call1(rt, "a", {x}, 100, 10)[0];
  TensorId b = call1(rt, "b", {x}, 100, 10)[0];
  call1(rt, "c", {x}, 100, 10);        // evicts a
  EXPECT_NO_THROW(rt.materialize(a));  // 10 ns of remat: under the limit
  EXPECT_THROW(rt.materialize(b), RematLimitExceeded);  // 20 > 15
  rt.check_invariants();
}

TEST(RuntimeTest, AMillionOpChainRematerializesWithoutRecursion) {
  constexpr int kOps = 1000000;
  Runtime rt({}, make_heuristic("lru"));
  TensorId x = rt.add_constant(8);
  TensorId t = x;
  for (int i = 0; i < kOps; ++i) {
    TensorId next = call1(rt, "f", {t}, 8, 1)[0];
    if (t != x) rt.release(t);  // eager: evicted, kept in the graph
    t = next;
  }
  rt.release(t);
  EXPECT_EQ(rt.stats().memory_bytes, 8);
  rt.retain(t);
  rt.materialize(t);  // replays the whole chain on the explicit stack
  EXPECT_TRUE(rt.is_defined(t));
  EXPECT_EQ(rt.stats().remat_ops, static_cast<std::uint64_t>(kOps));
}

TEST(RuntimeTest, BadArgumentsThrowInvalidArgument) {
  Runtime rt({}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(8);
  EXPECT_THROW(rt.release(12345), InvalidArgument);
  EXPECT_THROW(rt.materialize(99), InvalidArgument);
  OutputSpec bad_alias{0, 3};
  EXPECT_THROW(rt.call("v", std::vector<TensorId>{x}, {&bad_alias, 1}, 1),
               InvalidArgument);
  OutputSpec negative{-5, -1};
  EXPECT_THROW(rt.call("n", std::vector<TensorId>{x}, {&negative, 1}, 1),
               InvalidArgument);
  EXPECT_THROW(rt.call("none", std::vector<TensorId>{x}, {}, 1),
               InvalidArgument);
  OutputSpec ok{8, -1};
  EXPECT_THROW(rt.call("c", std::vector<TensorId>{x}, {&ok, 1}, -1),
               InvalidArgument);
  rt.release(x);
  EXPECT_THROW(rt.release(x), InvalidArgument);  // no reference left
  EXPECT_THROW(Runtime({.budget_bytes = -1}, make_heuristic("dtr")),
               InvalidArgument);
  EXPECT_THROW(make_heuristic("nope"), InvalidArgument);
  rt.check_invariants();
}

TEST(RuntimeTest, TwoPhaseCallRecordsOutputsAfterTheOpRan) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 500}, make_heuristic("dtr"), &ex);
  TensorId x = rt.add_constant(100);
  ex.first_compute(rt.graph(), rt.graph().tensor(x).op);
  TensorId a = call1(rt, "a", {x}, 300)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(a).op);
  std::vector<TensorId> in{x};
  rt.begin_call(in);
  rt.make_room(300);  // a must go to fit the new output
  EXPECT_FALSE(rt.is_defined(a));
  OutputSpec out{300, -1};
  TensorId b = rt.end_call("b", in, {&out, 1}, 5)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(b).op);
  EXPECT_TRUE(rt.is_defined(b));
  EXPECT_LE(rt.stats().peak_bytes, 500);
  rt.check_invariants();
  rt.begin_call(in);
  rt.abort_call(in);
  rt.check_invariants();
}

// Note [Workspace]
TEST(RuntimeTest, AWorkspaceGetsRoomWhenTheOpRunsAndWhenItIsReplayed) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 1000}, make_heuristic("lru"), &ex);
  TensorId x = rt.add_constant(100);
  ex.first_compute(rt.graph(), rt.graph().tensor(x).op);
  OutputSpec out{200, -1};
  const TensorId a = rt.call("a", std::vector<TensorId>{x}, {&out, 1}, 5)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(a).op);
  const TensorId b = rt.call("b", std::vector<TensorId>{x}, {&out, 1}, 5)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(b).op);
  // 100 + 200 + 200 resident; w's 200 and 400 of scratch fit only if a
  // (the least recently used) goes.
  const TensorId w = rt.call("w", std::vector<TensorId>{x}, {&out, 1}, 5,
                             /*workspace=*/400)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(w).op);
  EXPECT_FALSE(rt.is_defined(a));
  EXPECT_TRUE(rt.is_defined(b));
  EXPECT_EQ(rt.graph().op(rt.graph().tensor(w).op).workspace_bytes, 400);
  EXPECT_EQ(rt.stats().peak_bytes, 100 + 200 + 200 + 400);
  EXPECT_EQ(rt.stats().bottleneck_bytes, 200 + 400);
  // A replay of w makes the same room: with a and b resident again
  // (500), w's 600 need a (the least recently used) to go.
  rt.evict_all();
  rt.materialize(a);
  rt.materialize(b);
  rt.materialize(w);
  EXPECT_TRUE(rt.is_defined(w));
  EXPECT_FALSE(rt.is_defined(a));
  EXPECT_TRUE(rt.is_defined(b));
  EXPECT_LE(rt.stats().peak_bytes, 1000);
  rt.check_invariants();
}

TEST(RuntimeTest, AWorkspaceThatCannotFitIsOutOfMemory) {
  Runtime rt({.budget_bytes = 1000}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(100);
  OutputSpec out{200, -1};
  EXPECT_THROW(rt.call("w", std::vector<TensorId>{x}, {&out, 1}, 5, 701),
               OutOfMemory);
  EXPECT_THROW(rt.call("w", std::vector<TensorId>{x}, {&out, 1}, 5, -1),
               InvalidArgument);
  EXPECT_THROW(rt.call("w", std::vector<TensorId>{x}, {&out, 1}, 5,
                       std::int64_t{1} << 62),
               OverflowError);
  EXPECT_NO_THROW(rt.call("w", std::vector<TensorId>{x}, {&out, 1}, 5, 700));
  rt.check_invariants();
}

}  // namespace
}  // namespace dtr

namespace dtr {
namespace {

std::span<const TensorId> op1(Runtime& rt, std::vector<TensorId> in,
                              std::int64_t bytes) {
  OutputSpec out{bytes, -1};
  return rt.call("f", in, {&out, 1}, 5);
}

TEST(RuntimeApiTest, ReleaseWhileLockedEvictsAtUnlock) {
  Runtime rt({}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(10);
  TensorId a = op1(rt, {x}, 100)[0];
  std::vector<TensorId> in{a};
  rt.begin_call(in);  // a is locked, as during a framework op
  rt.release(a);      // its last handle goes while locked
  EXPECT_TRUE(rt.is_defined(a));
  rt.abort_call(in);  // last lock released: evicted now
  EXPECT_FALSE(rt.is_defined(a));
  EXPECT_EQ(rt.stats().eager_evictions, 1u);
  rt.check_invariants();
}

TEST(RuntimeApiTest, UnpinMakesAStorageEvictableAgain) {
  Runtime rt({.budget_bytes = 250}, make_heuristic("lru"));
  TensorId x = rt.add_constant(10);
  TensorId a = op1(rt, {x}, 100)[0];
  rt.pin(a);
  rt.pin(op1(rt, {x}, 100)[0]);
  EXPECT_THROW(op1(rt, {x}, 100), OutOfMemory);  // both are pinned
  rt.unpin(a);
  EXPECT_NO_THROW(op1(rt, {x}, 100));
  EXPECT_THROW(rt.unpin(x), InvalidArgument);  // constants stay
  rt.check_invariants();
}

TEST(RuntimeApiTest, EvictAllAndResetPeak) {
  Runtime rt({}, make_heuristic("dtr-eq"));
  TensorId x = rt.add_constant(10);
  op1(rt, {x}, 100);
  op1(rt, {x}, 200);
  EXPECT_EQ(rt.stats().peak_bytes, 310);
  rt.evict_all();
  EXPECT_EQ(rt.stats().memory_bytes, 10);
  rt.reset_peak();
  EXPECT_EQ(rt.stats().peak_bytes, 10);
  rt.check_invariants();
}

TEST(RuntimeApiTest, DeadConstantsCanBeFreed) {
  Runtime rt({.free_dead_constants = true}, make_heuristic("dtr"));
  TensorId w = rt.add_constant(64);
  TensorId y = op1(rt, {w}, 100)[0];
  rt.release(w);  // y's only parent can no longer be recomputed: y pinned
  EXPECT_EQ(rt.stats().memory_bytes, 100);
  EXPECT_TRUE(rt.graph().storage(rt.graph().tensor(y).storage).pinned);
  rt.check_invariants();
}

}  // namespace
}  // namespace dtr
