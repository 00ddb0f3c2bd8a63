// The score index against the scan's rules (Note [Exact victim from an
// index]): ties of rounded scores, zero costs, +inf scores, zero staleness,
// and random entries over a growing clock against a brute-force scan.
#include "dtr/core/heuristics/index/score_index.h"

#include <gtest/gtest.h>

#include <random>

namespace dtr {
namespace {

// cost_density is protected: a derived class can hand it out.
struct Density : Heuristic {
  static double of(const StalenessLine& l, std::int64_t now) {
    return cost_density(l.cost_ns, l.bytes, now - l.last_access);
  }
};

struct Fixture {
  // Adds a pooled storage of `bytes` last accessed at `last_access`, with
  // cost `cost_ns` (the pool order is the order of the calls).
  StorageId add(std::int64_t cost_ns, std::int64_t bytes,
                std::int64_t last_access) {
    StorageId s = g.add_storage();
    g.storage(s).bytes = bytes;
    g.storage(s).last_access = last_access;
    g.storage(s).resident = true;
    cost.resize(s + 1);
    cost[s] = cost_ns;
    pool.insert(g, s);
    return s;
  }
  void index_all(std::int64_t now) {
    for (StorageId s : pool.slots()) {
      if (s != kNoId) index.set(g, s, cost[s], now);
    }
  }
  StorageId choose(std::int64_t now) {
    ChooseContext ctx{g, pool, now, false, 0, rng};
    std::uint64_t accesses = 0;
    return index.choose(ctx, accesses);
  }
  // The scan of Heuristic::scan_pool, written out.
  StorageId scan(std::int64_t now) {
    StorageId best = kNoId;
    double best_score = std::numeric_limits<double>::infinity();
    for (StorageId s : pool.slots()) {
      if (s == kNoId) continue;
      const Storage& st = g.storage(s);
      double sc = Density::of({cost[s], st.bytes, st.last_access}, now);
      if (sc <= best_score) {
        best = s;
        best_score = sc;
      }
      if (sc == 0.0) break;
    }
    return best;
  }
  Graph g;
  EvictionPool pool;
  std::vector<std::int64_t> cost;
  std::mt19937_64 rng{1};
  ScoreIndex index{&Density::of};
};

// Two different exact scores that round to the same double: the scan keeps
// the later pool entry, although its exact score is the larger one.
TEST(ScoreIndexTest, EqualRoundedScoresGoToTheLaterEntry) {
  Fixture f;
  StorageId exact_min = f.add(3727856203652375, 390, 0);
  StorageId later = f.add(6394707180111382, 669, 0);
  f.add(std::int64_t{1} << 60, 1, 0);  // a worse one after them
  ASSERT_EQ(Density::of({3727856203652375, 390, 0}, 1),
            Density::of({6394707180111382, 669, 0}, 1));
  f.index_all(1);
  EXPECT_EQ(f.choose(1), later);
  EXPECT_EQ(f.scan(1), later);
  EXPECT_NE(exact_min, later);
}

// The scan stops at the first score of 0: the earliest zero-cost entry.
TEST(ScoreIndexTest, ZeroCostGoesToTheEarliestEntry) {
  Fixture f;
  f.add(5, 10, 0);
  StorageId first_zero = f.add(0, 10, 3);
  f.add(0, 100, 0);
  f.index_all(10);
  EXPECT_EQ(f.choose(10), first_zero);
  EXPECT_EQ(f.scan(10), first_zero);
}

// Zero staleness makes even a zero cost +inf, never 0.
TEST(ScoreIndexTest, ZeroStalenessIsNeverPreferred) {
  Fixture f;
  StorageId costly = f.add(1000, 1, 0);
  f.add(0, 10, 10);  // touched now: +inf
  f.add(1, 10, 10);  // touched now: +inf
  f.index_all(10);
  EXPECT_EQ(f.choose(10), costly);
  EXPECT_EQ(f.scan(10), costly);
}

// Every score +inf (zero staleness or zero bytes): the last entry.
TEST(ScoreIndexTest, AllInfiniteGoesToTheLastEntry) {
  Fixture f;
  f.add(5, 10, 7);
  f.add(0, 10, 7);
  StorageId last = f.add(5, 0, 0);  // zero bytes: never indexed
  f.index_all(7);
  EXPECT_EQ(f.choose(7), last);
  EXPECT_EQ(f.scan(7), last);
}

// Identical lines (same cost, bytes and last access) share a slot: the
// latest pool entry wins, and when it leaves the pool the next latest.
TEST(ScoreIndexTest, IdenticalLinesGoToTheLatestEntry) {
  Fixture f;
  f.add(7, 10, 2);
  StorageId middle = f.add(7, 10, 2);
  StorageId latest = f.add(7, 10, 2);
  f.add(7, 10, 1);  // older: lower score, but a different line
  f.add(9, 10, 2);  // worse
  f.index_all(5);
  f.pool.erase(f.g, f.pool.slots()[3]);
  EXPECT_EQ(f.choose(5), latest);
  f.pool.erase(f.g, latest);
  EXPECT_EQ(f.choose(5), middle);
  EXPECT_EQ(f.scan(5), middle);
}

// Entries left the pool are skipped (and dropped).
TEST(ScoreIndexTest, EntriesThatLeftThePoolAreSkipped) {
  Fixture f;
  StorageId best = f.add(1, 100, 0);
  StorageId next = f.add(5, 100, 0);
  f.index_all(10);
  f.pool.erase(f.g, best);
  EXPECT_EQ(f.choose(10), next);
  EXPECT_EQ(f.choose(20), next);
}

// Random entries inserted, re-keyed (accessed, or a new cost) and erased
// while the clock grows, some beyond 2^53 (cost_density_wide), many tied:
// the index picks the scan's victim every time. Exercises the tournament's
// certificates.
TEST(ScoreIndexTest, RandomOperationsMatchTheScan) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Fixture f;
    std::mt19937_64 rng(seed);
    const bool wide = seed % 2 == 0;
    const std::int64_t scale = wide ? std::int64_t{1} << 36 : 16;
    auto pick = [&](std::int64_t hi) {
      return std::uniform_int_distribution<std::int64_t>(0, hi)(rng);
    };
    std::int64_t now = 0;
    std::vector<StorageId> live;
    for (int step = 0; step < 3000; ++step) {
      now += pick(3) * (wide ? pick(1 << 20) : 1);
      int action = static_cast<int>(pick(9));
      if (action < 5 || live.empty()) {
        StorageId s = f.add(pick(4) * pick(scale), pick(3) * pick(scale),
                            now - pick(std::min<std::int64_t>(now, 8)));
        f.index.set(f.g, s, f.cost[s], now);
        live.push_back(s);
      } else if (action < 7) {  // accessed now, or its cost changed
        StorageId s = live[pick(live.size() - 1)];
        if (action == 5) {
          f.g.storage(s).last_access = now;
        } else {
          f.cost[s] = pick(4) * pick(scale);
        }
        f.index.set(f.g, s, f.cost[s], now);
      } else if (action < 8) {  // evicted
        std::size_t i = pick(live.size() - 1);
        f.pool.erase(f.g, live[i]);
        f.index.erase(live[i], now);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ASSERT_EQ(f.choose(now), f.scan(now)) << "step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace dtr
