// Note [Inputs in argument order] (runtime.cpp): a call whose inputs run
// out of memory in a frame's order (defined inputs locked first) retries
// them in argument order when RuntimeOptions::retry_inputs_in_order is set,
// as begin_call always does.
//
// The graph (sizes in bytes, budget 300): p (200) -> a (100); q (a
// 0-byte constant) -> b (100); then x(a, b). Before x, a and p are evicted
// and b is resident. A frame locks b first, replays p (300 in use), then
// has no room for a: p and b are both locked. In argument order, a comes
// first: replaying p and a evicts the unlocked b, which is then replayed
// from q once p can go.
#include <gtest/gtest.h>

#include <vector>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"

namespace dtr {
namespace {

struct Before {
  TensorId a = kNoId;
  TensorId b = kNoId;
};

Before a_evicted_b_resident(Runtime& rt) {
  const TensorId q = rt.add_constant(0);
  OutputSpec big{200, -1}, small{100, -1};
  const TensorId p = rt.call("p", {}, {&big, 1}, 10)[0];
  const std::vector<TensorId> from_p{p}, from_q{q};
  Before s;
  s.a = rt.call("a", from_p, {&small, 1}, 10)[0];
  rt.release(p);  // evicted now (eager), p stays recomputable
  s.b = rt.call("b", from_q, {&small, 1}, 10)[0];
  rt.evict_all();
  rt.materialize(s.b);
  EXPECT_FALSE(rt.is_defined(s.a));
  EXPECT_TRUE(rt.is_defined(s.b));
  EXPECT_EQ(rt.stats().memory_bytes, 100);
  return s;
}

TEST(ArgumentOrderTest, AFrameRunsOutWhereArgumentOrderFits) {
  Runtime rt({.budget_bytes = 300}, make_heuristic("dtr"));
  const Before s = a_evicted_b_resident(rt);
  const std::vector<TensorId> in{s.a, s.b};
  OutputSpec out{0, -1};  // nothing to make room for: the inputs decide
  EXPECT_THROW(rt.call("x", in, {&out, 1}, 10), OutOfMemory);
  rt.check_invariants();
}

TEST(ArgumentOrderTest, TheRetryFitsAsBeginCallDoes) {
  for (const bool two_phase : {false, true}) {
    SCOPED_TRACE(two_phase ? "begin_call" : "call with the retry");
    Runtime rt({.budget_bytes = 300, .retry_inputs_in_order = true},
               make_heuristic("dtr"));
    const Before s = a_evicted_b_resident(rt);
    const std::vector<TensorId> in{s.a, s.b};
    OutputSpec out{0, -1};
    const std::uint64_t replays = rt.stats().remat_ops;
    TensorId x = kNoId;
    if (two_phase) {
      rt.begin_call(in);
      x = rt.end_call("x", in, {&out, 1}, 10)[0];
    } else {
      x = rt.call("x", in, {&out, 1}, 10)[0];
    }
    EXPECT_TRUE(rt.is_defined(x));
    EXPECT_TRUE(rt.is_defined(s.a));
    EXPECT_TRUE(rt.is_defined(s.b));
    EXPECT_LE(rt.stats().peak_bytes, 300);
    EXPECT_EQ(rt.stats().remat_ops - replays, 3u);  // p, a, then b again
    rt.check_invariants();
  }
}

}  // namespace
}  // namespace dtr
