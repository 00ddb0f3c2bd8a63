// Note [Index or scan]: "dtr-eq", "dtr" and "msps" drop their index when
// events dirty a large share of the pool search after search, scan
// meanwhile, and rebuild it later; a pool that dirties little keeps it, and
// so does "dtr-local", which does not opt in. The victims stay the scan's
// either way: every choice is checked (kCheck), and the whole run equals a
// scanning run's.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "dtr/core/heuristic.h"
#include "dtr/core/heuristics/index/indexed_heuristic.h"
#include "dtr/core/runtime.h"

namespace dtr {
namespace {

struct Outcome {
  RuntimeStats stats;
  std::uint64_t scanned = 0;
};

// A 400-op chain forward under a budget of 40 values, then every value
// read in reverse: the replays along the evicted chain change the cost of
// the candidates next to it at every search.
Outcome chain_forward_backward(const char* heuristic, ChoiceMode mode) {
  auto h = make_heuristic(heuristic);
  h->set_choice_mode(mode);
  const auto* indexed = dynamic_cast<const IndexedHeuristic*>(h.get());
  Runtime rt({.budget_bytes = 40 * 100}, std::move(h));
  const OutputSpec value{100, -1};
  std::vector<TensorId> xs{rt.call("x", {}, {&value, 1}, 10)[0]};
  for (int i = 0; i < 400; ++i) {
    xs.push_back(rt.call("f", {&xs.back(), 1}, {&value, 1}, 10 + i % 7)[0]);
  }
  for (auto it = xs.rbegin(); it != xs.rend(); ++it) {
    const TensorId g = rt.call("g", {&*it, 1}, {&value, 1}, 5)[0];
    rt.release(g);
  }
  return {rt.stats(), indexed ? indexed->scanned_searches() : 0};
}

TEST(IndexOrScanTest, ChurnDropsTheIndexAndKeepsTheScansVictims) {
  const Outcome checked = chain_forward_backward("dtr-eq", ChoiceMode::kCheck);
  const Outcome indexed = chain_forward_backward("dtr-eq", ChoiceMode::kIndex);
  const Outcome scanned = chain_forward_backward("dtr-eq", ChoiceMode::kScan);
  EXPECT_GT(indexed.stats.evictions, 100u);
  EXPECT_GT(indexed.scanned, 0u) << "the index was never dropped";
  EXPECT_LT(indexed.scanned, indexed.stats.eviction_searches)
      << "the index was never rebuilt";
  EXPECT_EQ(indexed.stats.evictions, scanned.stats.evictions);
  EXPECT_EQ(indexed.stats.remat_ops, scanned.stats.remat_ops);
  EXPECT_EQ(indexed.stats.clock_ns, scanned.stats.clock_ns);
  EXPECT_EQ(checked.stats.clock_ns, scanned.stats.clock_ns);
}

TEST(IndexOrScanTest, RegionHeuristicsFallBackToThePrunedScan) {
  for (const char* h : {"dtr", "msps"}) {
    SCOPED_TRACE(h);
    const Outcome checked = chain_forward_backward(h, ChoiceMode::kCheck);
    const Outcome scanned = chain_forward_backward(h, ChoiceMode::kScan);
    EXPECT_GT(checked.scanned, 0u) << "the index was never dropped";
    EXPECT_EQ(checked.stats.evictions, scanned.stats.evictions);
    EXPECT_EQ(checked.stats.clock_ns, scanned.stats.clock_ns);
  }
}

TEST(IndexOrScanTest, DtrLocalKeepsItsIndexUnderChurn) {
  for (const char* h : {"dtr-local"}) {
    SCOPED_TRACE(h);
    const Outcome indexed = chain_forward_backward(h, ChoiceMode::kIndex);
    EXPECT_GT(indexed.stats.evictions, 100u);
    EXPECT_EQ(indexed.scanned, 0u);
  }
}

TEST(IndexOrScanTest, AQuietPoolKeepsItsIndex) {
  // 3,000 independent values under a budget of 1,000: each new one evicts
  // one old one; a search finds only the new value and the victim dirty.
  auto h = make_heuristic("dtr-eq");
  const auto* indexed = dynamic_cast<const IndexedHeuristic*>(h.get());
  Runtime rt({.budget_bytes = 1000 * 100}, std::move(h));
  const OutputSpec value{100, -1};
  for (int i = 0; i < 3000; ++i) rt.call("x", {}, {&value, 1}, 10 + i % 13);
  EXPECT_GE(rt.stats().evictions, 1999u);
  EXPECT_EQ(indexed->scanned_searches(), 0u);
}

}  // namespace
}  // namespace dtr
