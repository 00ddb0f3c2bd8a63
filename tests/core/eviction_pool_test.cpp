#include "dtr/core/eviction_pool.h"

#include <gtest/gtest.h>

namespace dtr {
namespace {

void add_storages(Graph& g, int storages) {
  for (int i = 0; i < storages; ++i) g.add_storage();
}

std::vector<StorageId> live(const EvictionPool& p) {
  std::vector<StorageId> out;
  for (StorageId s : p.slots()) {
    if (s != kNoId) out.push_back(s);
  }
  return out;
}

TEST(EvictionPoolTest, KeepsInsertionOrderAcrossErasesAndCompaction) {
  Graph g;
  add_storages(g, 200);
  EvictionPool p;
  for (StorageId s = 0; s < 200; ++s) EXPECT_TRUE(p.insert(g, s));
  for (StorageId s = 0; s < 200; s += 2) EXPECT_TRUE(p.erase(g, s));
  EXPECT_EQ(p.size(), 100u);
  EXPECT_TRUE(p.insert(g, 0));  // re-inserted: goes to the end
  std::vector<StorageId> expect;
  for (StorageId s = 1; s < 200; s += 2) expect.push_back(s);
  expect.push_back(0);
  EXPECT_EQ(live(p), expect);
  p.compact(g);
  EXPECT_EQ(p.slots(), expect);
  for (std::size_t i = 0; i < expect.size(); ++i) {
    EXPECT_EQ(g.storage(expect[i]).pool_slot, i);
  }
}

TEST(EvictionPoolTest, DuplicateInsertAndMissingEraseReportFalse) {
  Graph g;
  add_storages(g, 3);
  EvictionPool p;
  EXPECT_TRUE(p.insert(g, 1));
  EXPECT_FALSE(p.insert(g, 1));
  EXPECT_FALSE(p.erase(g, 2));
  EXPECT_TRUE(p.contains(g, 1));
  EXPECT_TRUE(p.erase(g, 1));
  EXPECT_TRUE(p.empty());
  EXPECT_FALSE(p.contains(g, 1));
}

}  // namespace
}  // namespace dtr
