// Fault safety of the runtime: an Executor that fails while replaying, or a
// budget that runs out, in the middle of a nested rematerialization must
// leave the runtime consistent (no lock left, memory accounted exactly, no
// buffer leaked) and report which tensor was being recomputed.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"
#include "support/checked_executor.h"

namespace dtr {
namespace {

using testing::CheckedExecutor;

// Throws on the k-th replay (1-based) from now; 0: never. A failing replay
// writes nothing, as a framework op that throws before returning.
class FailingExecutor : public CheckedExecutor {
 public:
  void fail_at(std::size_t k) { countdown_ = k; }
  void replay(const Graph& g, OpId op) override {
    if (countdown_ > 0 && --countdown_ == 0) {
      throw std::runtime_error("injected failure in '" +
                               std::string(g.op(op).name) + "'");
    }
    CheckedExecutor::replay(g, op);
  }

 private:
  std::size_t countdown_ = 0;
};

struct Chain {
  std::vector<TensorId> tensors;  // tensors[0] is the constant
  std::vector<std::uint64_t> values;
};

// x -> t1 -> ... -> tn, each 100 bytes, every handle released except the
// last one's, so that all intermediates are evicted at once (eager).
Chain make_chain(Runtime& rt, CheckedExecutor& ex, int n) {
  Chain c;
  c.tensors.push_back(rt.add_constant(10));
  ex.first_compute(rt.graph(), rt.graph().tensor(c.tensors[0]).op);
  for (int i = 1; i <= n; ++i) {
    OutputSpec out{100, -1};
    const TensorId in[] = {c.tensors.back()};
    TensorId t = rt.call("f" + std::to_string(i), in, {&out, 1}, 10)[0];
    ex.first_compute(rt.graph(), rt.graph().tensor(t).op);
    c.values.push_back(ex.read(t));
    if (i > 1) rt.release(c.tensors.back());
    c.tensors.push_back(t);
  }
  return c;
}

// The invariants a caller relies on after a failure, checked directly as
// well as through check_invariants().
void expect_consistent(const Runtime& rt, const CheckedExecutor& ex) {
  rt.check_invariants();
  std::int64_t resident = 0;
  for (StorageId s = 0; s < rt.graph().storage_count(); ++s) {
    const Storage& st = rt.graph().storage(s);
    EXPECT_EQ(st.locks, 0u) << "storage " << s << " left locked";
    if (st.resident) resident += st.bytes;
  }
  EXPECT_EQ(rt.stats().memory_bytes, resident);
  // No buffer leaked: the executor holds exactly the defined tensors.
  for (TensorId t = 0; t < rt.graph().tensor_count(); ++t) {
    if (rt.graph().tensor(t).dead) continue;
    EXPECT_EQ(ex.has(t), rt.graph().tensor(t).defined) << "tensor " << t;
  }
}

TEST(FaultTest, ReplayFailureInANestedRematIsReportedWithItsTensor) {
  FailingExecutor ex;
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr"), &ex);
  Chain c = make_chain(rt, ex, 5);
  rt.evict_all();
  ex.fail_at(2);  // f1 replays fine, f2 (three levels below f5) throws
  try {
    rt.materialize(c.tensors[5]);
    FAIL() << "expected RematerializationError";
  } catch (const RematerializationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tensor " + std::to_string(c.tensors[2]) + " (op 'f2'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("needed for tensor " + std::to_string(c.tensors[5]) +
                        " (op 'f5'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("injected failure in 'f2'"), std::string::npos);
    EXPECT_THROW(std::rethrow_exception(e.cause()), std::runtime_error);
  }
  expect_consistent(rt, ex);
  EXPECT_TRUE(rt.is_defined(c.tensors[1]));  // finished before the failure
  EXPECT_FALSE(rt.is_defined(c.tensors[2]));

  // The runtime goes on: the same request now succeeds, bit-identically.
  rt.materialize(c.tensors[5]);
  EXPECT_EQ(ex.read(c.tensors[5]), c.values[4]);
  OutputSpec out{100, -1};
  const TensorId in[] = {c.tensors[5]};
  TensorId y = rt.call("g", in, {&out, 1}, 10)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(y).op);
  expect_consistent(rt, ex);
}

TEST(FaultTest, ReplayFailureWhileACallRecomputesItsInputLeavesNoTrace) {
  FailingExecutor ex;
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr-eq"), &ex);
  Chain c = make_chain(rt, ex, 4);
  rt.evict_all();
  const std::uint64_t ops = rt.stats().ops;
  ex.fail_at(3);
  OutputSpec out{100, -1};
  const TensorId in[] = {c.tensors[4]};
  EXPECT_THROW(rt.call("g", in, {&out, 1}, 10), RematerializationError);
  EXPECT_EQ(rt.stats().ops, ops);  // the failed call is not recorded
  expect_consistent(rt, ex);
  TensorId y = rt.call("g", in, {&out, 1}, 10)[0];
  ex.first_compute(rt.graph(), rt.graph().tensor(y).op);
  EXPECT_EQ(ex.read(c.tensors[4]), c.values[3]);
  expect_consistent(rt, ex);
}

TEST(FaultTest, OutOfMemoryInANestedRematNamesTheTensorAndKeepsItsType) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 10000}, make_heuristic("lru"), &ex);
  Chain c = make_chain(rt, ex, 5);
  rt.evict_all();
  // The constant plus one value fit: f1 comes back, f2 needs room while
  // f1 is locked.
  rt.set_budget(10 + 100);
  try {
    rt.materialize(c.tensors[5]);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.needed_bytes(), 100);
    EXPECT_NE(what.find("while rematerializing tensor " +
                        std::to_string(c.tensors[2])),
              std::string::npos)
        << what;
    EXPECT_EQ(e.rematerializing().rfind(
                  "tensor " + std::to_string(c.tensors[2]) + " (op ", 0),
              0u)
        << e.rematerializing();
    EXPECT_NE(what.find("needed for tensor " + std::to_string(c.tensors[5])),
              std::string::npos)
        << what;
  }
  expect_consistent(rt, ex);
  rt.set_budget(10 + 200);  // a value and its parent: enough
  rt.materialize(c.tensors[5]);
  EXPECT_EQ(ex.read(c.tensors[5]), c.values[4]);
  EXPECT_LE(rt.stats().memory_bytes, 10 + 200);
  expect_consistent(rt, ex);
}

// A framework asks for room while replaying (the LibTorch layer's
// allocation hook); an out-of-memory there keeps its type too.
class RoomAskingExecutor : public CheckedExecutor {
 public:
  Runtime* rt = nullptr;
  std::int64_t ask_bytes = 0;
  void replay(const Graph& g, OpId op) override {
    if (ask_bytes > 0) rt->make_room(ask_bytes);
    CheckedExecutor::replay(g, op);
  }
};

TEST(FaultTest, OutOfMemoryRaisedInsideAReplayStaysAnOutOfMemory) {
  RoomAskingExecutor ex;
  Runtime rt({.budget_bytes = 10000}, make_heuristic("dtr"), &ex);
  ex.rt = &rt;
  Chain c = make_chain(rt, ex, 3);
  rt.evict_all();
  ex.ask_bytes = 20000;  // more than the whole budget
  EXPECT_THROW(rt.materialize(c.tensors[3]), OutOfMemory);
  expect_consistent(rt, ex);
  ex.ask_bytes = 0;
  rt.materialize(c.tensors[3]);
  EXPECT_EQ(ex.read(c.tensors[3]), c.values[2]);
  expect_consistent(rt, ex);
}

// Failing at every possible depth, then finishing the work, always leaves
// the same state as never failing.
TEST(FaultTest, FailingAtEveryDepthThenRetryingGivesTheSameValues) {
  for (std::size_t k = 1; k <= 6; ++k) {
    SCOPED_TRACE("failing replay " + std::to_string(k));
    FailingExecutor ex;
    Runtime rt({.budget_bytes = 10 + 300}, make_heuristic("dtr"), &ex);
    Chain c = make_chain(rt, ex, 6);
    rt.evict_all();
    ex.fail_at(k);
    EXPECT_THROW(rt.materialize(c.tensors[6]), RematerializationError);
    expect_consistent(rt, ex);
    rt.materialize(c.tensors[6]);
    EXPECT_EQ(ex.read(c.tensors[6]), c.values[5]);
    expect_consistent(rt, ex);
  }
}

// Deep chains are rematerialized on the runtime's explicit stack: 10^5
// evicted values in one request, with a replaying executor, in bounded
// stack space.
TEST(FaultTest, AHundredThousandEvictedValuesRematerializeIteratively) {
  constexpr int kDepth = 100000;
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = 10 + 300}, make_heuristic("dtr-eq"), &ex);
  Chain c = make_chain(rt, ex, kDepth);
  rt.evict_all();
  rt.materialize(c.tensors[kDepth]);
  EXPECT_EQ(ex.read(c.tensors[kDepth]), c.values[kDepth - 1]);
  EXPECT_GE(rt.stats().remat_ops, static_cast<std::uint64_t>(kDepth));
  rt.check_invariants();
}

}  // namespace
}  // namespace dtr
