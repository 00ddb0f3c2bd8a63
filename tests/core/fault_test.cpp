// Regression tests for the runtime bugs runtime_fuzz found (the reproducers
// are in fuzz/corpus/runtime_fuzz/, decoded in
// fuzz/regressions/runtime_fuzz/README.md).
#include <gtest/gtest.h>

#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"

namespace dtr {
namespace {

std::span<const TensorId> call(Runtime& rt, std::vector<TensorId> in,
                               std::vector<OutputSpec> out,
                               std::int64_t cost = 10) {
  return rt.call("op", in, out, cost);
}

// remat-limit-then-constant.bin
TEST(FaultTest, RuntimeStaysUsableAfterRematLimitExceeded) {
  Runtime rt({.policy = DeallocPolicy::kIgnore, .remat_limit_ns = 1},
             make_heuristic("dtr"));
  const TensorId a = call(rt, {}, {{170, -1}}, 28)[0];
  rt.evict_all();
  EXPECT_THROW(rt.pin(a), RematLimitExceeded);
  rt.check_invariants();
  // Neither needs a recomputation, so neither may throw.
  const TensorId c = rt.add_constant(183);
  const TensorId b = call(rt, {c}, {{10, -1}}, 5)[0];
  EXPECT_TRUE(rt.is_defined(c));
  EXPECT_TRUE(rt.is_defined(b));
  rt.evict_all();
  EXPECT_EQ(rt.stats().memory_bytes, 183);
  rt.check_invariants();
}

// A failed call leaves nothing resident or pooled.
TEST(FaultTest, FailedCallLeavesNoResidentStorage) {
  Runtime rt({.budget_bytes = 300, .policy = DeallocPolicy::kIgnore},
             make_heuristic("dtr"));
  const TensorId c = rt.add_constant(200);
  EXPECT_THROW(call(rt, {c}, {{150, -1}}), OutOfMemory);
  EXPECT_EQ(rt.stats().memory_bytes, 200);
  EXPECT_EQ(rt.evictable_bytes(), 0);
  rt.evict_all();
  rt.check_invariants();
}

// materialize-output-of-failed-call.bin
TEST(FaultTest, OutputIdsOfAFailedCallAreRejected) {
  Runtime rt({.budget_bytes = 402, .policy = DeallocPolicy::kIgnore},
             make_heuristic("dtr-local"));
  const TensorId a = call(rt, {}, {{230, -1}}, 40)[0];
  EXPECT_THROW(call(rt, {a, a}, {{0, 1}, {224, -1}}), OutOfMemory);
  const TensorId view = a + 1, fresh = a + 2;  // consecutive ids
  for (TensorId t : {view, fresh}) {
    EXPECT_THROW(rt.materialize(t), InvalidArgument);
    EXPECT_THROW(rt.pin(t), InvalidArgument);
    EXPECT_THROW(rt.retain(t), InvalidArgument);
    EXPECT_THROW(rt.forget(t), InvalidArgument);
  }
  EXPECT_EQ(rt.stats().memory_bytes, 230);
  rt.check_invariants();
}

// pin-recycled-id-taken-by-failed-call.bin
TEST(FaultTest, RecycledIdTakenByAFailedCallIsRejected) {
  Runtime rt({.budget_bytes = 100, .policy = DeallocPolicy::kIgnore},
             make_heuristic("random"));
  const TensorId k = rt.add_constant(0);
  rt.release(k);
  rt.forget(k);  // k's id is free again
  // Two outputs: this call does not take k's id (a run of one).
  const TensorId a = call(rt, {}, {{60, -1}, {0, -1}})[0];
  rt.evict_all();
  rt.set_budget(10);  // a cannot be recomputed: the call below fails
  EXPECT_THROW(call(rt, {a}, {{0, 0}}), OutOfMemory);
  rt.set_budget(100);
  // The failed call's view output took k's recycled id.
  EXPECT_THROW(rt.pin(k), InvalidArgument);
  EXPECT_THROW(rt.materialize(k), InvalidArgument);
  rt.check_invariants();
}

// forget-banished-sibling-after-replay.bin
TEST(FaultTest, ReplayDoesNotBringBackABanishedSibling) {
  Runtime rt({.budget_bytes = 169, .policy = DeallocPolicy::kBanish},
             make_heuristic("dtr"));
  auto out = call(rt, {}, {{58, -1}, {42, -1}});
  const TensorId a = out[0], b = out[1];
  rt.release(b);  // banished
  rt.evict_all();
  rt.pin(a);  // replays the op, which writes b's storage too
  EXPECT_FALSE(rt.is_defined(b));
  EXPECT_EQ(rt.stats().memory_bytes, 58);
  rt.check_invariants();
  rt.forget(b);
  rt.check_invariants();
}

}  // namespace
}  // namespace dtr
