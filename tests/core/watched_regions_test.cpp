// Note [Truncated regions]: when an interior member of a cached region
// becomes resident, the cache keeps the sums found before that member as a
// lower bound instead of forgetting everything. The bound must never exceed
// what a fresh walk finds (a too-high bound hides a victim); these graphs
// are built so that keeping too much would exceed it.
#include "dtr/core/heuristics/index/watched_regions.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>

#include "dtr/core/graph.h"
#include "dtr/core/heuristics/index/region_walk.h"

namespace dtr {
namespace {

class WatchedRegionsTest : public ::testing::Test {
 protected:
  // A value made by one op reading `inputs`; evicted unless `resident`.
  StorageId value(std::initializer_list<StorageId> inputs, std::int64_t cost,
                  bool resident = false) {
    const OpId op = g_.add_op();
    const TensorId t = g_.add_tensor();
    const StorageId s = g_.add_storage();
    g_.op(op).cost_ns = cost;
    for (StorageId in : inputs) read(op, in);
    g_.op(op).outputs.push_back(t);
    Tensor& tensor = g_.tensor(t);
    tensor.op = op;
    tensor.storage = s;
    tensor.bytes = 8;
    Storage& st = g_.storage(s);
    st.tensors.push_back(t);
    st.bytes = 8;
    st.compute_ns = cost;
    st.computed = true;
    st.resident = resident;
    walk_.on_storage_created(s);
    watched_.on_storage_created(s);
    return s;
  }
  // A view of `target`'s storage made by an op reading `input`: `input`
  // becomes a parent of `target` as well as whatever it was before.
  void view_into(StorageId target, StorageId input) {
    const OpId op = g_.add_op();
    const TensorId t = g_.add_tensor();
    read(op, input);
    g_.op(op).outputs.push_back(t);
    Tensor& tensor = g_.tensor(t);
    tensor.op = op;
    tensor.storage = target;
    tensor.is_alias = true;
    g_.storage(target).tensors.push_back(t);
  }
  void read(OpId op, StorageId in) {
    const TensorId root = g_.storage(in).tensors[0];
    g_.op(op).inputs.push_back(root);
    g_.tensor(root).consumers.push_back(op);
  }
  // Rematerializes s and tells the watchers, as the runtime does.
  void rematerialize(StorageId s) {
    g_.storage(s).resident = true;
    watched_.on_changed(s, WatchedRegions::Change::kShrinks);
  }
  std::int64_t fresh_sums(StorageId s) {
    Region r;
    walk_.walk(g_, s, 0, nullptr, r);
    return r.down_compute_ns + r.up_compute_ns;
  }
  // Caches s's regions as a bound from a walk stopped past `max_ns`.
  void bound_at(StorageId s, std::int64_t max_ns) {
    struct Limit final : RegionLimit {
      bool over(std::int64_t total_ns) const override {
        return total_ns > safe_ns;
      }
    } limit;
    limit.safe_ns = max_ns;
    WatchedRegions::Sums sums;
    ASSERT_FALSE(watched_.within(g_, s, 0, limit, sums));
    ASSERT_TRUE(watched_.known(s));
    ASSERT_FALSE(watched_.exact(s));
  }

  Graph g_;
  std::uint64_t accesses_ = 0;
  RegionWalk walk_{/*with_down=*/true, accesses_};
  WatchedRegions watched_{walk_, accesses_};
};

// top (resident) -> p4 -> p3 -> p2 -> p1 -> candidate, p1..p4 evicted.
TEST_F(WatchedRegionsTest, ARematerializedMemberKeepsWhatWasFoundBeforeIt) {
  const StorageId top = value({}, 1, /*resident=*/true);
  const StorageId p4 = value({top}, 1000);
  const StorageId p3 = value({p4}, 100);
  const StorageId p2 = value({p3}, 10);
  const StorageId p1 = value({p2}, 1);
  const StorageId candidate = value({p1}, 5, /*resident=*/true);

  bound_at(candidate, 50);  // stops once p3 is counted: 1 + 10 + 100
  EXPECT_EQ(watched_.lower_bound(candidate), 111);
  EXPECT_LE(watched_.lower_bound(candidate), fresh_sums(candidate));

  rematerialize(p2);  // p1 alone is left of the region
  EXPECT_EQ(fresh_sums(candidate), 1);
  EXPECT_EQ(watched_.lower_bound(candidate), 1);
  EXPECT_FALSE(watched_.exact(candidate));
  // The cache was reported so that the index re-keys it lower.
  bool reported = false;
  for (StorageId s : watched_.stale()) reported |= s == candidate;
  EXPECT_TRUE(reported);

  rematerialize(p4);  // past the bound's end: nothing changes
  EXPECT_EQ(watched_.lower_bound(candidate), 1);
  rematerialize(p1);
  EXPECT_EQ(watched_.lower_bound(candidate), 0);
  EXPECT_EQ(fresh_sums(candidate), 0);
}

TEST_F(WatchedRegionsTest, AnExactRegionTruncatesPerDirection) {
  // up: above (resident) -> u1 -> candidate; down: candidate -> d1 -> d2.
  const StorageId above = value({}, 1, /*resident=*/true);
  const StorageId u1 = value({above}, 7);
  const StorageId candidate = value({u1}, 5, /*resident=*/true);
  const StorageId d1 = value({candidate}, 20);
  const StorageId d2 = value({d1}, 300);

  EXPECT_EQ(watched_.exact_sums(g_, candidate).up_compute_ns, 7);
  EXPECT_EQ(watched_.exact_sums(g_, candidate).down_compute_ns, 320);
  ASSERT_TRUE(watched_.exact(candidate));

  rematerialize(d2);  // the upward sum and d1 stay
  EXPECT_EQ(watched_.lower_bound(candidate), 27);
  rematerialize(u1);
  EXPECT_EQ(watched_.lower_bound(candidate), 20);
  EXPECT_EQ(fresh_sums(candidate), 20);
}

TEST_F(WatchedRegionsTest, AStorageInBothDirectionsDropsTheDownwardBound) {
  // x is a child of the candidate and, through a view it wrote into the
  // candidate's storage, also a parent; y is x's child.
  const StorageId candidate = value({}, 5, /*resident=*/true);
  const StorageId x = value({candidate}, 40);
  value({x}, 600);  // y
  view_into(candidate, x);

  EXPECT_EQ(watched_.exact_sums(g_, candidate).up_compute_ns, 40);
  EXPECT_EQ(watched_.exact_sums(g_, candidate).down_compute_ns, 640);

  // x is listed once (upward); y was found through it downward. Without x
  // the candidate reaches nothing: keeping y's prefix would claim 40.
  rematerialize(x);
  EXPECT_EQ(fresh_sums(candidate), 0);
  EXPECT_EQ(watched_.lower_bound(candidate), 0);
}

TEST_F(WatchedRegionsTest, AChangedFrontierMemberDemotesAnExactRegion) {
  const StorageId above = value({}, 1, /*resident=*/true);
  const StorageId u1 = value({above}, 7);
  const StorageId candidate = value({u1}, 5, /*resident=*/true);
  watched_.exact_sums(g_, candidate);
  ASSERT_TRUE(watched_.exact(candidate));

  // `above` is recycled-like (a shrink event at a frontier member): the
  // interior's sum still holds as a bound.
  watched_.on_changed(above, WatchedRegions::Change::kShrinks);
  EXPECT_FALSE(watched_.exact(candidate));
  EXPECT_EQ(watched_.lower_bound(candidate), 7);
  EXPECT_LE(watched_.lower_bound(candidate), fresh_sums(candidate));
}

}  // namespace
}  // namespace dtr
