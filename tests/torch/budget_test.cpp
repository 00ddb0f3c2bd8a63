// Note [Concurrent budgets]: budget blocks end in any order, on any
// thread, and leave the budget as it was before them.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <thread>

#include "dtr/core/error.h"
#include "dtr/torch/dtr_torch.h"
#include "tests/torch/torch_test_support.h"

namespace {

namespace pt = dtr::pt;
using BudgetTest = dtr::pt::testing::BudgetRestoringTest;

TEST_F(BudgetTest, BlocksEndingOutOfOrderRestoreTheBase) {
  pt::set_budget(5000);
  auto outer = std::make_unique<pt::Budget>(100);
  auto inner = std::make_unique<pt::Budget>(200);
  EXPECT_EQ(pt::budget(), 200);  // one thread: its innermost block
  outer.reset();
  EXPECT_EQ(pt::budget(), 200);
  inner.reset();
  EXPECT_EQ(pt::budget(), 5000);
}

TEST_F(BudgetTest, BlocksOnTwoThreadsAddUp) {
  pt::Budget mine(100);
  std::int64_t both = 0;
  std::thread other([&] {
    pt::Budget theirs(300);
    both = pt::budget();
  });
  other.join();
  EXPECT_EQ(both, 400);
  EXPECT_EQ(pt::budget(), 100);
}

TEST_F(BudgetTest, EndingABlockTwiceIsAnError) {
  const std::uint64_t token = pt::push_budget(100);
  pt::pop_budget(token);
  EXPECT_THROW(pt::pop_budget(token), dtr::Error);
  EXPECT_THROW(pt::push_budget(-1), dtr::Error);
  EXPECT_EQ(pt::budget(), pt::kUnlimited);
}

TEST_F(BudgetTest, HugeBudgetsMeanUnlimited) {
  pt::set_budget(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(pt::budget(), pt::kUnlimited);
  pt::Budget a(pt::kUnlimited);
  std::thread other([] { pt::Budget b(pt::kUnlimited); });  // no overflow
  other.join();
  EXPECT_EQ(pt::budget(), pt::kUnlimited);
}

}  // namespace
