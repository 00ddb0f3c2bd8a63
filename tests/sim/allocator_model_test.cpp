// The allocator models (dtr/sim/allocator/): best-fit placement, splitting
// and coalescing; the caching allocator's rounding, pools, segments and
// cache; and, on random request sequences, the layout invariants.
#include "dtr/sim/allocator/allocator_model.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/sim/allocator/best_fit.h"
#include "dtr/sim/allocator/block_space.h"
#include "dtr/sim/allocator/caching.h"

namespace dtr::sim {
namespace {

constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t kBig = std::int64_t{1} << 50;  // no capacity limit

TEST(BestFitModelTest, FillsTheSmallestHoleThatFits) {
  BestFitModel m(kBig);
  const std::int64_t a = m.place(100).addr;  // [0, 100)
  const std::int64_t b = m.place(50).addr;   // [100, 150)
  const std::int64_t c = m.place(30).addr;   // [150, 180)
  const std::int64_t d = m.place(10).addr;   // [180, 190)
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 100);
  EXPECT_EQ(c, 150);
  EXPECT_EQ(d, 180);
  m.release(a);                      // hole of 100 at 0
  m.release(c);                      // hole of 30 at 150
  EXPECT_EQ(m.place(20).addr, 150);  // the 30-byte hole is the better fit
  EXPECT_EQ(m.place(40).addr, 0);    // only the 100-byte hole fits
  EXPECT_EQ(m.reserved_bytes(), 190);
  m.check_invariants();
}

TEST(BestFitModelTest, FreedNeighboursCoalesce) {
  BestFitModel m(kBig);
  const std::int64_t a = m.place(40).addr;
  const std::int64_t b = m.place(40).addr;
  const std::int64_t c = m.place(40).addr;
  m.place(1);  // keeps the top live
  m.release(a);
  m.release(c);
  m.release(b);  // merges with both sides: one 120-byte hole
  m.check_invariants();
  EXPECT_EQ(m.place(120).addr, 0);
  EXPECT_EQ(m.reserved_bytes(), 121);
}

TEST(BestFitModelTest, ReservedIsTheExtentUpToTheLastLiveBlock) {
  BestFitModel m(150);
  EXPECT_EQ(m.reserved_bytes(), 0);
  const std::int64_t a = m.place(100).addr;
  const std::int64_t b = m.place(50).addr;
  EXPECT_EQ(m.reserved_bytes(), 150);
  m.release(b);
  EXPECT_EQ(m.reserved_bytes(), 100);
  // A free top block is grown rather than skipped.
  EXPECT_EQ(m.place(60).addr, 100);
  EXPECT_FALSE(m.place(1).within_capacity);  // ends at 161 > 150
  m.release(a);
  EXPECT_TRUE(m.place(100).within_capacity);  // the hole at 0
  m.check_invariants();
}

TEST(CachingModelTest, RoundsAsPyTorchDoes) {
  EXPECT_EQ(CachingModel::round_size(1), 512);
  EXPECT_EQ(CachingModel::round_size(512), 512);
  EXPECT_EQ(CachingModel::round_size(513), 1024);
  EXPECT_EQ(CachingModel::segment_size(512), 2 * kMiB);
  EXPECT_EQ(CachingModel::segment_size(kMiB), 2 * kMiB);
  EXPECT_EQ(CachingModel::segment_size(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(CachingModel::segment_size(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(CachingModel::segment_size(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(CachingModel::segment_size(11 * kMiB), 12 * kMiB);
}

TEST(CachingModelTest, SmallRequestsShareATwoMiBSegment) {
  CachingModel m(kBig);
  const std::int64_t a = m.place(1).addr;
  const std::int64_t b = m.place(1000).addr;
  EXPECT_EQ(b, a + 512);
  EXPECT_EQ(m.reserved_bytes(), 2 * kMiB);
  m.place(kMiB);  // 1 MiB + 1536 < 2 MiB: still the first segment
  EXPECT_EQ(m.reserved_bytes(), 2 * kMiB);
  m.place(kMiB);  // no longer fits: a second small segment
  EXPECT_EQ(m.reserved_bytes(), 4 * kMiB);
  m.check_invariants();
}

TEST(CachingModelTest, MediumRequestsTakeTwentyMiBSegments) {
  CachingModel m(kBig);
  m.place(2 * kMiB);
  EXPECT_EQ(m.reserved_bytes(), 20 * kMiB);
  m.place(9 * kMiB);  // the 18 MiB rest of the segment is split off
  EXPECT_EQ(m.reserved_bytes(), 20 * kMiB);
  m.place(9 * kMiB + 512);  // 9 MiB left: a new segment
  EXPECT_EQ(m.reserved_bytes(), 40 * kMiB);
  m.check_invariants();
}

TEST(CachingModelTest, LargeBlocksSplitOnlyOverOneMiBOfRest) {
  CachingModel m(kBig);
  // 11 MiB takes a 12 MiB segment; the 1 MiB rest goes with the block.
  const std::int64_t a = m.place(11 * kMiB).addr;
  EXPECT_EQ(m.allocated_bytes(), 12 * kMiB);
  // 9 MiB in a 20 MiB segment: the 11 MiB rest is split off.
  m.place(9 * kMiB);
  EXPECT_EQ(m.allocated_bytes(), 21 * kMiB);
  EXPECT_EQ(m.reserved_bytes(), 32 * kMiB);
  m.release(a);
  EXPECT_EQ(m.allocated_bytes(), 9 * kMiB);
  m.check_invariants();
}

TEST(CachingModelTest, FreedSegmentsAreCachedAndReused) {
  CachingModel m(kBig);
  const std::int64_t a = m.place(11 * kMiB).addr;
  m.release(a);
  EXPECT_EQ(m.reserved_bytes(), 12 * kMiB);  // cached, not given back
  EXPECT_EQ(m.place(11 * kMiB).addr, a);
  EXPECT_EQ(m.reserved_bytes(), 12 * kMiB);
}

TEST(CachingModelTest, SegmentsNeverCoalesce) {
  CachingModel m(kBig);
  const std::int64_t a = m.place(12 * kMiB).addr;
  const std::int64_t b = m.place(12 * kMiB).addr;
  EXPECT_EQ(b, a + 12 * kMiB);  // adjacent addresses, two segments
  m.release(a);
  m.release(b);
  m.check_invariants();
  m.place(24 * kMiB);  // 24 MiB free in two pieces: a third segment
  EXPECT_EQ(m.reserved_bytes(), 48 * kMiB);
}

TEST(CachingModelTest, CachedSegmentsGoBackBeforeTheCapacityIsPassed) {
  CachingModel m(32 * kMiB);
  m.release(m.place(12 * kMiB).addr);
  EXPECT_TRUE(m.place(20 * kMiB).within_capacity);  // 12 + 20 = 32: fits
  EXPECT_EQ(m.reserved_bytes(), 32 * kMiB);
  // 14 more would pass 32: the cached 12 MiB segment is released first.
  EXPECT_FALSE(m.place(14 * kMiB).within_capacity);  // 20 + 14 > 32
  EXPECT_EQ(m.reserved_bytes(), 34 * kMiB);
  EXPECT_EQ(m.segments_released(), 1);
  m.check_invariants();
}

TEST(AllocatorKindTest, ParsesTheNamesAndRejectsOthers) {
  EXPECT_EQ(parse_allocator_kind("perfect"), AllocatorKind::kPerfect);
  EXPECT_EQ(parse_allocator_kind("best-fit"), AllocatorKind::kBestFit);
  EXPECT_EQ(parse_allocator_kind("caching"), AllocatorKind::kCaching);
  try {
    parse_allocator_kind("buddy");
    FAIL() << "accepted an unknown model";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("--allocator"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'buddy'"), std::string::npos);
  }
}

// Random requests and frees, sizes spanning both caching pools: after every
// step the layout is valid and reserved covers live.
void check_random_sequence(AllocatorKind kind, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::unique_ptr<AllocatorModel> m = make_allocator_model(kind, 64 * kMiB);
  std::map<std::int64_t, std::int64_t> live;  // addr -> size
  std::int64_t live_bytes = 0;
  for (int step = 0; step < 2000; ++step) {
    const bool free_one = !live.empty() && rng() % 5 < 2;
    if (free_one) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      m->release(it->first);
      live_bytes -= it->second;
      live.erase(it);
    } else {
      const std::int64_t scale = rng() % 2 == 0 ? 4096 : 24 * kMiB;
      const auto bytes = static_cast<std::int64_t>(rng() % scale) + 1;
      const std::int64_t addr = m->place(bytes).addr;
      ASSERT_EQ(live.count(addr), 0u) << "two live blocks at " << addr;
      live[addr] = bytes;
      live_bytes += bytes;
    }
    m->check_invariants();
    ASSERT_GE(m->reserved_bytes(), live_bytes) << "step " << step;
  }
  // The blocks given out do not overlap, with their requested sizes.
  std::int64_t end = INT64_MIN;
  for (const auto& [addr, size] : live) {
    ASSERT_GE(addr, end);
    end = addr + size;
  }
}

TEST(AllocatorModelPropertyTest, RandomSequencesKeepTheInvariants) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    check_random_sequence(AllocatorKind::kBestFit, seed);
    check_random_sequence(AllocatorKind::kCaching, seed);
  }
}

TEST(BlockSpaceTest, CheckInvariantsCatchesAStaleIndex) {
  BlockSpace s;
  s.add_region(0, 100);
  s.take(0, 40, /*split=*/true);
  s.check_invariants();
  EXPECT_EQ(s.live_bytes(), 40);
  EXPECT_THROW(s.release(50), InternalError);  // not a live block
}

}  // namespace
}  // namespace dtr::sim
