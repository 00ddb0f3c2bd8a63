#include "dtr/core/small_vector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace dtr {
namespace {

using Vec = SmallVector<std::uint32_t, 3>;

std::vector<std::uint32_t> values(const Vec& v) {
  return std::vector<std::uint32_t>(v.begin(), v.end());
}

Vec iota(std::uint32_t n) {
  Vec v;
  for (std::uint32_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

TEST(SmallVectorTest, KeepsOrderAcrossTheMoveToTheHeap) {
  Vec v = iota(3);
  EXPECT_EQ(v.capacity(), 3u);  // still inline
  v.push_back(3);
  EXPECT_GT(v.capacity(), 3u);
  EXPECT_EQ(values(v), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(v.front(), 0u);
  EXPECT_EQ(v.back(), 3u);
  EXPECT_EQ(v[2], 2u);
}

TEST(SmallVectorTest, ClearKeepsTheHeapBlock) {
  Vec v = iota(10);
  const std::size_t capacity = v.capacity();
  const std::uint32_t* block = v.data();
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), capacity);
  for (std::uint32_t i = 0; i < 10; ++i) v.push_back(i);
  EXPECT_EQ(v.data(), block);  // no new allocation
}

TEST(SmallVectorTest, EraseKeepsTheOrderOfTheRest) {
  Vec v = iota(6);
  v.erase(std::find(v.begin(), v.end(), 2u));
  EXPECT_EQ(values(v), (std::vector<std::uint32_t>{0, 1, 3, 4, 5}));
  v.erase(std::remove_if(v.begin(), v.end(),
                         [](std::uint32_t x) { return x % 2 == 1; }),
          v.end());
  EXPECT_EQ(values(v), (std::vector<std::uint32_t>{0, 4}));
  // The idiom discard_call uses: erase the last occurrence.
  Vec w{7, 8, 7};
  auto it = std::find(w.rbegin(), w.rend(), 7u);
  w.erase(std::next(it).base());
  EXPECT_EQ(values(w), (std::vector<std::uint32_t>{7, 8}));
}

TEST(SmallVectorTest, MovesStealTheHeapBlockAndEmptyTheSource) {
  Vec heap = iota(8);
  const std::uint32_t* block = heap.data();
  Vec moved(std::move(heap));
  EXPECT_EQ(moved.data(), block);
  EXPECT_EQ(values(moved), values(iota(8)));
  EXPECT_TRUE(heap.empty());  // NOLINT(bugprone-use-after-move): specified
  heap.push_back(42);         // and still usable
  EXPECT_EQ(values(heap), (std::vector<std::uint32_t>{42}));

  Vec inline_source = iota(2);
  Vec target = iota(9);
  target = std::move(inline_source);
  EXPECT_EQ(values(target), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(target.capacity(), 3u);  // the old heap block was freed
}

TEST(SmallVectorTest, CopiesAreIndependent) {
  Vec a = iota(5);
  Vec b = a;
  b[0] = 99;
  b.push_back(5);
  EXPECT_EQ(values(a), values(iota(5)));
  EXPECT_EQ(b.size(), 6u);
  EXPECT_EQ(b[0], 99u);
  EXPECT_FALSE(a == b);
  b = a;
  EXPECT_TRUE(a == b);
}

TEST(SmallVectorTest, AssignAndReserve) {
  Vec v;
  const std::vector<std::uint32_t> src{4, 5, 6, 7, 8};
  v.assign(src.begin(), src.end());
  EXPECT_EQ(values(v), src);
  v.assign(src.begin(), src.begin() + 1);
  EXPECT_EQ(values(v), (std::vector<std::uint32_t>{4}));
  Vec r;
  r.reserve(50);
  EXPECT_GE(r.capacity(), 50u);
  EXPECT_TRUE(r.empty());
}

}  // namespace
}  // namespace dtr
