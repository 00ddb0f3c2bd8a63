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
TEST(FuzzFoundTest, RuntimeStaysUsableAfterRematLimitExceeded) {
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
TEST(FuzzFoundTest, FailedCallLeavesNoResidentStorage) {
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
TEST(FuzzFoundTest, OutputIdsOfAFailedCallAreRejected) {
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
TEST(FuzzFoundTest, RecycledIdTakenByAFailedCallIsRejected) {
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
TEST(FuzzFoundTest, ReplayDoesNotBringBackABanishedSibling) {
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

// materialize-view-whose-input-is-banished.bin
TEST(FuzzFoundTest, InputIsNotBanishedWhileAFrameNeedsIt) {
  Runtime rt({.policy = DeallocPolicy::kBanish}, make_heuristic("lru"));
  auto out = call(rt, {}, {{0, -1}, {48, -1}});
  const TensorId a = out[0], b = out[1];
  const TensorId v = call(rt, {a, b}, {{0, 1}})[0];  // a view of b
  rt.release(b);
  rt.evict_all();
  rt.release(a);  // banish waits: the storage of b (via v) is evicted
  rt.materialize(v);
  EXPECT_TRUE(rt.is_defined(v));
  rt.check_invariants();
}

// released-input-banished-during-call.bin
TEST(FuzzFoundTest, ReleasedInputIsNotBanishedDuringTheCall) {
  Runtime rt({.policy = DeallocPolicy::kBanish}, make_heuristic("dtr"));
  auto out = call(rt, {}, {{120, -1}, {182, -1}, {243, -1}});
  const TensorId b = out[1], c = out[2];
  std::vector<TensorId> in{b, c};
  rt.begin_call(in);
  std::vector<OutputSpec> view{{0, 0}};
  rt.end_call("g", in, view, 10);
  rt.evict_all();
  rt.release(c);  // banish waits: the storage of b (via the view) is evicted
  const TensorId k = rt.add_constant(69);
  (void)call(rt, {k, c}, {{0, 0}});  // used to lock an evicted storage
  rt.check_invariants();
}

// Under banish, materialize(t) of a released t leaves t defined.
TEST(FuzzFoundTest, MaterializeOfAReleasedTensorDefinesIt) {
  Runtime rt({.policy = DeallocPolicy::kBanish}, make_heuristic("lru"));
  auto out = call(rt, {}, {{10, -1}, {48, -1}});
  const TensorId a = out[0], b = out[1];
  call(rt, {a, b}, {{0, 1}});  // a view of b, read from a
  rt.evict_all();
  rt.release(a);      // banish waits: the storage of b is evicted
  rt.materialize(a);  // brings b's storage back too
  EXPECT_TRUE(rt.is_defined(a));
  rt.check_invariants();
}

// The same for a released view whose storage is its op's input: the banish
// that unlocking the input retries must spare it.
TEST(FuzzFoundTest, MaterializeOfAReleasedViewDefinesIt) {
  Runtime rt({.policy = DeallocPolicy::kBanish}, make_heuristic("lru"));
  auto out = call(rt, {}, {{48, -1}, {10, -1}});
  const TensorId a = out[0], b = out[1];
  const TensorId v = call(rt, {a}, {{0, 0}})[0];  // a view of a
  call(rt, {a, b}, {{0, 1}});                     // a view of b
  rt.release(b);
  rt.evict_all();
  rt.release(v);
  rt.release(a);  // banish waits: the storage of b (via the view) is evicted
  rt.materialize(v);
  EXPECT_TRUE(rt.is_defined(v));
  rt.check_invariants();
}

// trace_fuzz, banish-needs-freed-value-*.log (now in
// fuzz/corpus/trace_fuzz/): rebuilding a storage from its root leaves its
// views undefined, so a resident storage can hold a view that still needs
// its op's other input. Banishing that input then lost a held value.
TEST(FuzzFoundTest, InputOfAnUndefinedViewOnAResidentStorageIsNotBanished) {
  Runtime rt({.policy = DeallocPolicy::kBanish}, make_heuristic("lru"));
  const TensorId x = call(rt, {}, {{30, -1}})[0];
  const TensorId b = call(rt, {}, {{50, -1}})[0];
  const TensorId v = call(rt, {b, x}, {{0, 0}})[0];  // a view of b, reads x
  rt.evict_all();
  rt.materialize(b);  // b's storage is back; the view is not
  ASSERT_FALSE(rt.is_defined(v));
  rt.release(x);  // must wait: v still needs x
  EXPECT_EQ(rt.stats().banishments, 0u);
  rt.materialize(v);
  EXPECT_TRUE(rt.is_defined(v));
  rt.check_invariants();
  // Once v is rebuilt nothing needs x any more: the retried banish frees it.
  EXPECT_EQ(rt.stats().banishments, 1u);
  EXPECT_THROW(rt.materialize(x), InvalidArgument);
  EXPECT_TRUE(rt.is_defined(v));
  rt.check_invariants();
}

// runtime_fuzz (unpin-child-of-freed-constant.bin): a storage pinned because
// its parent was freed for good can never be recomputed; unpin() made it
// evictable, and the held value was lost at the next eviction.
TEST(FuzzFoundTest, UnpinKeepsAChildOfAFreedStoragePinned) {
  for (DeallocPolicy policy : {DeallocPolicy::kBanish, DeallocPolicy::kEager}) {
    Runtime rt({.policy = policy, .free_dead_constants = true},
               make_heuristic("lru"));
    const TensorId x = policy == DeallocPolicy::kBanish
                           ? call(rt, {}, {{30, -1}})[0]
                           : rt.add_constant(30);
    const TensorId y = call(rt, {x}, {{40, -1}})[0];
    rt.release(x);  // freed for good: y can no longer be recomputed
    ASSERT_EQ(rt.stats().memory_bytes, 40);
    EXPECT_THROW(rt.unpin(y), InvalidArgument);
    rt.evict_all();
    EXPECT_TRUE(rt.is_defined(y));
    rt.check_invariants();
  }
}

// runtime_fuzz (materialize-released-view-evicted-by-stale-flag.bin), eager
// policy: a storage whose last handle goes while it is locked is evicted at
// its last unlock, but when it was pinned by then the flag outlived that
// unlock, and a later materialize() of a view of it evicted it again as it
// unlocked the view's input: materialize returned with the view undefined.
TEST(FuzzFoundTest, EvictOnUnlockEndsWithTheLastUnlock) {
  Runtime rt({}, make_heuristic("lru"));
  const TensorId a = call(rt, {}, {{100, -1}})[0];
  const TensorId v = call(rt, {a}, {{0, 0}})[0];  // a view of a
  std::vector<TensorId> in{a};
  rt.begin_call(in);
  rt.release(a);
  rt.release(v);  // the last handle goes while locked
  rt.pin(v);
  rt.abort_call(in);  // the last unlock: pinned, so not evicted
  rt.unpin(v);        // eager: unreferenced, so evicted now
  ASSERT_FALSE(rt.is_defined(v));
  rt.materialize(v);
  EXPECT_TRUE(rt.is_defined(v));
  rt.check_invariants();
}

}  // namespace
}  // namespace dtr
