// Sums of sizes and costs: the runtime rejects input that would carry any
// of its counters past int64 (OverflowError, an InvalidArgument) instead of
// wrapping, and stays usable afterwards (see dtr/core/limits.h).
#include "dtr/core/limits.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"

namespace dtr {
namespace {

constexpr std::int64_t kPetabyte = std::int64_t{1} << 50;
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

TensorId call1(Runtime& rt, const char* name, TensorId in, std::int64_t bytes,
               std::int64_t cost) {
  OutputSpec out{bytes, -1};
  const TensorId inputs[] = {in};
  return rt.call(name, inputs, {&out, 1}, cost)[0];
}

TEST(LimitsTest, SaturatingArithmeticClampsInsteadOfWrapping) {
  EXPECT_EQ(saturating_add(kMaxInt - 1, 5), kMaxInt);
  EXPECT_EQ(saturating_add(-kMaxInt, -5),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(saturating_add(3, 4), 7);
  EXPECT_EQ(saturating_mul(kPetabyte, 1 << 20), kMaxInt);
  EXPECT_EQ(saturating_mul(kMaxInt, 4), kMaxInt);
  EXPECT_EQ(saturating_mul(6, 7), 42);
  EXPECT_EQ(saturating_mul(0, kMaxInt), 0);
}

// 9,000 values of 2^50 bytes held at once: the unbounded run used to wrap
// its byte count and report out-of-memory.
TEST(LimitsTest, StorageBytesPastTheLimitAreRejectedNotOutOfMemory) {
  Runtime rt({}, make_heuristic("lru"));
  TensorId x = rt.add_constant(8);
  int accepted = 0;
  try {
    for (; accepted < 9000; ++accepted) call1(rt, "big", x, kPetabyte, 1);
    FAIL() << "expected OverflowError";
  } catch (const OverflowError& e) {
    EXPECT_NE(std::string(e.what()).find("2^61 bytes"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(accepted, 2047);  // 8 + 2047 * 2^50 < 2^61 - 1 < one more
  EXPECT_EQ(rt.stats().memory_bytes, 8 + 2047 * kPetabyte);
  rt.check_invariants();
  call1(rt, "small", x, 8, 1);  // still usable
  rt.check_invariants();
}

TEST(LimitsTest, OutputSizesOfOneCallCannotWrap) {
  Runtime rt({}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(8);
  OutputSpec outs[] = {{kMaxInt, -1}, {kMaxInt, -1}};
  const TensorId in[] = {x};
  EXPECT_THROW(rt.call("two", in, outs, 1), OverflowError);
  EXPECT_THROW(rt.add_constant(kMaxInt), OverflowError);
  EXPECT_THROW(rt.make_room(kMaxInt), OutOfMemory);  // no wrap to "fits"
  rt.check_invariants();
}

TEST(LimitsTest, RecordedCostsPastTheLimitAreRejected) {
  Runtime rt({}, make_heuristic("dtr"));
  TensorId x = rt.add_constant(8);
  call1(rt, "a", x, 8, kMaxTotalCostNs / 2);
  EXPECT_THROW(call1(rt, "b", x, 8, kMaxInt), OverflowError);
  EXPECT_THROW(call1(rt, "c", x, 8, kMaxTotalCostNs / 2 + 2), OverflowError);
  call1(rt, "d", x, 8, kMaxTotalCostNs / 2 + 1);  // exactly at the limit
  EXPECT_EQ(rt.stats().model_compute_ns, kMaxTotalCostNs);
  rt.check_invariants();
}

// Recomputation is unbounded: the clock is checked at every replay.
TEST(LimitsTest, TheClockStopsBeforeOverflowingUnderRecomputation) {
  Runtime rt({}, make_heuristic("lru"));
  TensorId x = rt.add_constant(8);
  TensorId a = call1(rt, "a", x, 8, kMaxTotalCostNs);
  int replays = 0;
  try {
    for (; replays < 10; ++replays) {
      rt.evict_all();
      rt.materialize(a);
    }
    FAIL() << "expected OverflowError";
  } catch (const OverflowError& e) {
    EXPECT_NE(std::string(e.what()).find("clock"), std::string::npos);
  }
  EXPECT_EQ(replays, 3);  // 4 * (2^61 - 1) + 1 < 2^63 - 1 < 5 * ...
  EXPECT_GT(rt.stats().clock_ns, 0);
  rt.check_invariants();
}

// One costly op with many outputs, all evicted: the evicted neighbourhood of
// the op reading them sums the cost once per output, past int64.
TEST(LimitsTest, NeighbourhoodCostSumsSaturateInsteadOfWrapping) {
  for (const char* h : {"dtr", "dtr-eq", "msps"}) {
    SCOPED_TRACE(h);
    Runtime rt({}, make_heuristic(h));
    TensorId x = rt.add_constant(8);
    std::vector<OutputSpec> outs(8, {8, -1});
    const TensorId in[] = {x};
    auto a = rt.call("split", in, outs, kMaxTotalCostNs);
    std::vector<TensorId> parts(a.begin(), a.end());
    OutputSpec one{8, -1};
    TensorId b = rt.call("cat", parts, {&one, 1}, 0)[0];
    for (TensorId p : parts) rt.release(p);  // evicted at once (eager)
    const double score = rt.score(rt.graph().tensor(b).storage);
    EXPECT_GT(score, 0.0) << "a wrapped sum gives a negative score";
    rt.check_invariants();
  }
}

}  // namespace
}  // namespace dtr
