// Tests of BudgetBlocks (dtr/torch/budget_blocks.h), the bookkeeping of
// the budgets the user set, with thread ids standing for threads: blocks
// of different threads add up, end in any order and leave the base; a
// child of fork() keeps only its own thread's blocks.
#include "dtr/torch/budget_blocks.h"

#include <gtest/gtest.h>

#include <thread>

#include "dtr/core/error.h"

namespace {

namespace pt = dtr::pt;
using pt::BudgetScope;

TEST(BudgetBlocksTest, InnermostBlocksOfEachThreadAddUp) {
  pt::BudgetBlocks blocks;
  std::thread::id a = std::this_thread::get_id();
  std::thread::id b;
  std::thread([&] { b = std::this_thread::get_id(); }).join();
  ASSERT_NE(a, b);
  blocks.set(5000, BudgetScope::kCheckpointed, a);
  const auto outer = blocks.push(100, BudgetScope::kCheckpointed, a);
  const auto inner = blocks.push(200, BudgetScope::kCheckpointed, a);
  const auto other = blocks.push(30, BudgetScope::kCheckpointed, b);
  EXPECT_EQ(blocks.in_force().bytes, 230);
  blocks.pop(outer);  // out of order
  EXPECT_EQ(blocks.in_force().bytes, 230);
  blocks.pop(inner);
  EXPECT_EQ(blocks.in_force().bytes, 30);
  blocks.pop(other);
  EXPECT_EQ(blocks.in_force().bytes, 5000);
  EXPECT_THROW(blocks.pop(other), dtr::Error);  // ended twice
}

TEST(BudgetBlocksTest, SetChangesTheInnermostBlockOrElseTheBase) {
  pt::BudgetBlocks blocks;
  const auto self = std::this_thread::get_id();
  EXPECT_EQ(blocks.set(700, BudgetScope::kProcess, self), pt::kUnlimited);
  const auto token = blocks.push(100, BudgetScope::kCheckpointed, self);
  EXPECT_EQ(blocks.set(50, BudgetScope::kCheckpointed, self), 100);
  EXPECT_EQ(blocks.in_force().bytes, 50);
  blocks.pop(token);
  EXPECT_EQ(blocks.in_force().bytes, 700);
  EXPECT_EQ(blocks.in_force().scope, BudgetScope::kProcess);
  // Sums saturate at unlimited.
  blocks.push(pt::kUnlimited, BudgetScope::kCheckpointed, self);
  std::thread([&] {
    blocks.push(pt::kUnlimited, BudgetScope::kCheckpointed,
                std::this_thread::get_id());
  }).join();
  EXPECT_EQ(blocks.in_force().bytes, pt::kUnlimited);
}

TEST(BudgetBlocksTest, ConcurrentBlocksMustAgreeOnTheScope) {
  pt::BudgetBlocks blocks;
  blocks.push(100, BudgetScope::kProcess, std::this_thread::get_id());
  std::thread([&] {
    EXPECT_THROW(blocks.push(100, BudgetScope::kCheckpointed,
                             std::this_thread::get_id()),
                 dtr::Error);
  }).join();
  // The same thread may nest another scope.
  EXPECT_NO_THROW(
      blocks.push(10, BudgetScope::kCheckpointed, std::this_thread::get_id()));
}

TEST(BudgetBlocksTest, AChildKeepsItsThreadsBlocksAndIgnoresTheOthers) {
  pt::BudgetBlocks parent;
  const auto self = std::this_thread::get_id();
  parent.set(900, BudgetScope::kCheckpointed, self);
  const auto mine = parent.push(100, BudgetScope::kCheckpointed, self);
  std::uint64_t theirs = 0;
  std::thread([&] {
    theirs =
        parent.push(40, BudgetScope::kCheckpointed, std::this_thread::get_id());
  }).join();
  pt::BudgetBlocks child = parent.for_child(self, /*keep_blocks=*/true);
  EXPECT_EQ(child.in_force().bytes, 100);
  EXPECT_NO_THROW(child.pop(theirs));  // stayed with the parent
  child.pop(mine);
  EXPECT_EQ(child.in_force().bytes, 900);
  pt::BudgetBlocks bare = parent.for_child(self, /*keep_blocks=*/false);
  EXPECT_EQ(bare.in_force().bytes, 900);
  EXPECT_NO_THROW(bare.pop(mine));
  // Tokens given out after the fork are new.
  const auto later = bare.push(5, BudgetScope::kCheckpointed, self);
  EXPECT_GT(later, theirs);
  bare.pop(later);
  EXPECT_THROW(bare.pop(later), dtr::Error);
}

}  // namespace
