// Each heuristic's score, checked against its definition on small graphs
// whose evicted neighbourhoods are known by hand.
#include "dtr/core/heuristic.h"

#include <gtest/gtest.h>

#include <cmath>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"

namespace dtr {
namespace {

struct Fixture {
  explicit Fixture(const std::string& heuristic)
      : rt({}, make_heuristic(heuristic)) {}
  TensorId op(const char* name, std::vector<TensorId> in, std::int64_t bytes,
              std::int64_t cost) {
    OutputSpec out{bytes, -1};
    return rt.call(name, in, {&out, 1}, cost)[0];
  }
  StorageId storage(TensorId t) { return rt.graph().tensor(t).storage; }
  std::int64_t now() { return rt.stats().clock_ns; }
  std::int64_t last(TensorId t) {
    return rt.graph().storage(storage(t)).last_access;
  }
  Runtime rt;
};

double density(std::int64_t c, std::int64_t m, std::int64_t stale) {
  return double(c) / (double(m) * double(stale));
}

TEST(HeuristicTest, LocalIsCostOverSizeTimesStaleness) {
  Fixture f("dtr-local");
  TensorId x = f.rt.add_constant(10);
  TensorId a = f.op("a", {x}, 100, 30);
  f.op("b", {x}, 50, 20);  // advances the clock by 20
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(a)),
                   density(30, 100, f.now() - f.last(a)));
}

TEST(HeuristicTest, LruScoresTheLastAccessTime) {
  Fixture f("lru");
  TensorId x = f.rt.add_constant(10);
  TensorId a = f.op("a", {x}, 100, 30);
  TensorId b = f.op("b", {x}, 50, 20);
  EXPECT_LT(f.rt.score(f.storage(a)), f.rt.score(f.storage(b)));
  EXPECT_EQ(f.rt.score(f.storage(a)), double(f.last(a)));
}

TEST(HeuristicTest, SizePrefersTheLargestStorage) {
  Fixture f("size");
  TensorId x = f.rt.add_constant(10);
  TensorId a = f.op("a", {x}, 100, 30);
  TensorId b = f.op("b", {x}, 50, 20);
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(a)), 1.0 / 100);
  EXPECT_LT(f.rt.score(f.storage(a)), f.rt.score(f.storage(b)));
}

TEST(HeuristicTest, ZeroStalenessIsNeverPreferred) {
  Fixture f("dtr");
  TensorId x = f.rt.add_constant(10);
  TensorId a = f.op("a", {x}, 100, 30);
  EXPECT_TRUE(std::isinf(f.rt.score(f.storage(a))));  // just computed
}

// x -> a -> b -> c -> d, with b and c evicted: e*(a) looks down through b
// and c, e*(d) looks up through c and b.
TEST(HeuristicTest, ExactNeighbourhoodFollowsEvictedChains) {
  Fixture f("dtr");
  TensorId x = f.rt.add_constant(10);
  TensorId a = f.op("a", {x}, 100, 3);
  TensorId b = f.op("b", {a}, 100, 5);
  TensorId c = f.op("c", {b}, 100, 7);
  TensorId d = f.op("d", {c}, 100, 11);
  f.op("e", {x}, 1, 13);  // let time pass
  f.rt.release(b);
  f.rt.release(c);  // eager: both evicted
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(a)),
                   density(3 + 5 + 7, 100, f.now() - f.last(a)));
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(d)),
                   density(11 + 7 + 5, 100, f.now() - f.last(d)));
  // Recomputing c (and b, its parent) empties both neighbourhoods.
  f.rt.retain(c);
  f.rt.materialize(c);
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(a)),
                   density(3, 100, f.now() - f.last(a)));
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(d)),
                   density(11, 100, f.now() - f.last(d)));
}

// b = g(a, q) with q and b evicted: going down from a reaches b, and the
// two directions are never mixed, so q (b's other parent) is not in e*(a).
// The union-find approximation merges q and b into one class and counts q.
TEST(HeuristicTest, DirectionsAreNotMixedButTheEqClassesMergeThem) {
  for (const char* h : {"dtr", "dtr-eq"}) {
    SCOPED_TRACE(h);
    Fixture f(h);
    TensorId x = f.rt.add_constant(10);
    TensorId q = f.op("q", {x}, 100, 100);
    TensorId a = f.op("a", {x}, 100, 3);
    TensorId b = f.op("b", {a, q}, 100, 5);
    f.op("e", {x}, 1, 13);
    f.rt.release(q);
    f.rt.release(b);
    std::int64_t expected = std::string(h) == "dtr" ? 3 + 5 : 3 + 5 + 100;
    EXPECT_DOUBLE_EQ(f.rt.score(f.storage(a)),
                     density(expected, 100, f.now() - f.last(a)));
  }
}

// a -> b, a -> c, all evicted: one class. Recomputing a subtracts its cost
// but leaves b and c in one class (a "phantom" dependency).
TEST(HeuristicTest, EqClassSplitKeepsPhantomDependencies) {
  Fixture f("dtr-eq");
  TensorId x = f.rt.add_constant(10);
  TensorId a = f.op("a", {x}, 100, 2);
  TensorId b = f.op("b", {a}, 100, 30);
  TensorId c = f.op("c", {a}, 100, 50);
  TensorId y = f.op("y", {b}, 100, 7);  // a resident child of b only
  f.op("e", {x}, 1, 13);
  f.rt.release(b);
  f.rt.release(c);
  f.rt.release(a);  // evicted last: merges the classes of b and c
  f.rt.retain(a);
  f.rt.materialize(a);
  // y's only evicted neighbour is b, but b's class still holds c.
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(y)),
                   density(7 + 30 + 50, 100, f.now() - f.last(y)));
}

TEST(HeuristicTest, MspsCountsEvictedAncestorsOnly) {
  Fixture f("msps");
  TensorId x = f.rt.add_constant(10);
  TensorId a = f.op("a", {x}, 100, 3);
  TensorId b = f.op("b", {a}, 100, 5);
  TensorId c = f.op("c", {b}, 100, 7);
  TensorId d = f.op("d", {c}, 200, 11);
  f.rt.release(b);
  f.rt.release(c);
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(d)), double(11 + 7 + 5) / 200);
  EXPECT_DOUBLE_EQ(f.rt.score(f.storage(a)), 3.0 / 100);  // no descendants
}

// Metadata accesses count every storage a heuristic reads to score, so for
// the exact heuristics they include the walk through the evicted region.
// x -> a -> n1 -> ... -> nk -> d with n1..nk evicted: scoring d walks up
// through the k evicted storages to a, reading k + 1 storages (d has no
// children to walk down to); a second score with nothing changed uses the
// cached region and reads fewer.
TEST(HeuristicTest, RegionWalksCountAsMetadataAccesses) {
  for (const char* h : {"dtr", "msps"}) {
    for (int k : {1, 20}) {
      SCOPED_TRACE(std::string(h) + ", k = " + std::to_string(k));
      Fixture f(h);
      TensorId x = f.rt.add_constant(10);
      TensorId prev = f.op("a", {x}, 100, 3);
      std::vector<TensorId> evicted;
      for (int i = 0; i < k; ++i) {
        prev = f.op("n", {prev}, 100, 5);
        evicted.push_back(prev);
      }
      TensorId d = f.op("d", {prev}, 100, 11);
      f.op("e", {x}, 1, 13);                       // let time pass
      for (TensorId t : evicted) f.rt.release(t);  // eager: evicted
      ASSERT_FALSE(f.rt.is_defined(evicted.back()));

      const std::uint64_t before = f.rt.heuristic().accesses();
      f.rt.score(f.storage(d));
      const std::uint64_t first = f.rt.heuristic().accesses() - before;
      EXPECT_GE(first, static_cast<std::uint64_t>(k) + 1);
      f.rt.score(f.storage(d));
      const std::uint64_t second = f.rt.heuristic().accesses() - before - first;
      EXPECT_GE(second, 1u);  // the score itself
      EXPECT_LT(second, first);
    }
  }
}

TEST(HeuristicTest, RandomIsReproducibleBySeed) {
  auto pick_sequence = [](std::uint64_t seed) {
    Runtime rt({.budget_bytes = 1000, .seed = seed},
               make_heuristic("random", seed));
    TensorId x = rt.add_constant(10);
    std::vector<bool> defined;
    std::vector<TensorId> ts;
    for (int i = 0; i < 30; ++i) {
      OutputSpec out{100, -1};
      ts.push_back(rt.call("f", std::vector<TensorId>{x}, {&out, 1}, 1)[0]);
    }
    for (TensorId t : ts) defined.push_back(rt.is_defined(t));
    return defined;
  };
  EXPECT_EQ(pick_sequence(5), pick_sequence(5));
  EXPECT_NE(pick_sequence(5), pick_sequence(6));
}

TEST(HeuristicTest, NamesAreKnownAndUnknownOnesAreRejected) {
  for (const auto& n : heuristic_names()) {
    EXPECT_EQ(make_heuristic(n)->name(), n);
  }
  EXPECT_THROW(make_heuristic("h-best"), InvalidArgument);
}

TEST(HeuristicTest, ChoiceModesAreParsedAndUnknownOnesNamed) {
  EXPECT_EQ(parse_choice_mode("index"), ChoiceMode::kIndex);
  EXPECT_EQ(parse_choice_mode("scan"), ChoiceMode::kScan);
  EXPECT_EQ(parse_choice_mode("check"), ChoiceMode::kCheck);
  EXPECT_EQ(parse_choice_mode("fast-scan"), ChoiceMode::kFastScan);
  EXPECT_EQ(parse_choice_mode("check-fast-scan"), ChoiceMode::kCheckFastScan);
  try {
    parse_choice_mode("fast");
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'fast'"), std::string::npos);
  }
}

// The index is the default wherever a heuristic has one; every mode picks
// the same victims (here on a chain whose evictions merge dtr-eq classes
// and grow and split dtr's and msps's evicted regions).
TEST(HeuristicTest, EveryChoiceModeEvictsTheSameStorages) {
  for (const char* h : {"dtr", "msps", "dtr-eq", "dtr-local", "lru", "size"}) {
    SCOPED_TRACE(h);
    EXPECT_EQ(make_heuristic(h)->choice_mode(), ChoiceMode::kIndex);
    auto run = [&](ChoiceMode mode) {
      auto heuristic = make_heuristic(h);
      heuristic->set_choice_mode(mode);
      Runtime rt({.budget_bytes = 2000}, std::move(heuristic));
      TensorId t = rt.add_constant(10);
      std::vector<TensorId> all;
      for (int i = 0; i < 60; ++i) {
        OutputSpec out{100 + 10 * (i % 3), -1};
        t = rt.call("f", std::vector<TensorId>{t}, {&out, 1}, 1 + i % 5)[0];
        all.push_back(t);
      }
      rt.materialize(all[5]);  // recomputes through evicted classes
      std::vector<bool> defined;
      for (TensorId x : all) defined.push_back(rt.is_defined(x));
      return std::make_pair(defined, rt.stats().evictions);
    };
    auto scan = run(ChoiceMode::kScan);
    EXPECT_GT(scan.second, 0u);
    EXPECT_EQ(run(ChoiceMode::kIndex), scan);
    EXPECT_EQ(run(ChoiceMode::kCheck), scan);
    EXPECT_EQ(run(ChoiceMode::kFastScan), scan);
    EXPECT_EQ(run(ChoiceMode::kCheckFastScan), scan);
  }
}

}  // namespace
}  // namespace dtr
