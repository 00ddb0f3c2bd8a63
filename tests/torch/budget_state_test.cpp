// Tests of BudgetState (dtr/torch/budget_state.h): what is in force after
// the user's blocks change, DTR's share under each scope, and what the
// out-of-memory message says of the floor (Note [The floor]).
#include "dtr/torch/budget_state.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace {

namespace pt = dtr::pt;
using pt::BudgetScope;

// An assertion that prints the whole message when a part is missing.
testing::AssertionResult Says(const std::string& message,
                              const std::string& part) {
  if (message.find(part) != std::string::npos) {
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "no \"" << part << "\" in: " << message;
}

TEST(BudgetStateTest, ApplyTakesWhatTheBlocksSayAndUnlimitedIsCheckpointed) {
  pt::BudgetState budget;
  const auto self = std::this_thread::get_id();
  budget.blocks().set(1000, BudgetScope::kProcess, self);
  EXPECT_EQ(budget.limit(), pt::kUnlimited);  // not applied yet
  budget.apply();
  EXPECT_EQ(budget.limit(), 1000);
  EXPECT_TRUE(budget.bounds_process());
  budget.blocks().set(pt::kUnlimited, BudgetScope::kProcess, self);
  budget.apply();
  EXPECT_EQ(budget.scope(), BudgetScope::kCheckpointed);
}

TEST(BudgetStateTest, OnlyAProcessBudgetLeavesDtrTheLimitLessWhatLivesOutside) {
  pt::BudgetState budget;
  const auto self = std::this_thread::get_id();
  budget.blocks().set(1000, BudgetScope::kCheckpointed, self);
  budget.apply();
  EXPECT_EQ(budget.dtr_share(300), 1000);
  budget.blocks().set(1000, BudgetScope::kProcess, self);
  budget.apply();
  EXPECT_EQ(budget.dtr_share(300), 700);
  EXPECT_EQ(budget.dtr_share(1500), 0);  // never negative
}

TEST(BudgetStateTest, PeakKeepsTheMaximumUntilReset) {
  pt::BudgetState budget;
  budget.note_peak(50);
  budget.note_peak(20);
  EXPECT_EQ(budget.peak(), 50);
  budget.reset_peak(20);
  EXPECT_EQ(budget.peak(), 20);
}

// needed 100, evictable 40, budget 500, used 450 of which 300 held.
TEST(BudgetStateTest, TheMessageNamesTheFloorAndWhatItIsMadeOf) {
  pt::BudgetState budget;
  budget.blocks().set(500, BudgetScope::kCheckpointed,
                      std::this_thread::get_id());
  budget.apply();
  const std::string op = "aten::mm";
  const std::string m =
      budget.explain(dtr::OutOfMemory(100, 40, 500, 450), 300, &op);
  EXPECT_TRUE(Says(m, "out of memory in aten::mm: the budget of 500"));
  EXPECT_TRUE(Says(m, "floor of at least 550 bytes"));
  EXPECT_TRUE(Says(m, "300 held"));
  EXPECT_TRUE(Says(m, "150 locked"));
  EXPECT_TRUE(Says(m, "40 bytes were evicted"));
  EXPECT_TRUE(Says(m, "stats: dtr_peak_bytes"));
  EXPECT_FALSE(Says(m, "outside DTR"));
}

// Memory that ran out while an operator's evicted input was recomputed:
// the message names the operator and what was being recomputed.
TEST(BudgetStateTest, TheMessageSaysWhatWasBeingRecomputed) {
  pt::BudgetState budget;
  budget.blocks().set(500, BudgetScope::kCheckpointed,
                      std::this_thread::get_id());
  budget.apply();
  const std::string op = "aten::add.Tensor";
  const auto e = dtr::OutOfMemory::while_rematerializing(
      dtr::OutOfMemory(100, 40, 500, 450), "tensor 7 (op 'aten::relu', op 3)");
  EXPECT_EQ(e.rematerializing(), "tensor 7 (op 'aten::relu', op 3)");
  EXPECT_TRUE(Says(budget.explain(e, 0, &op),
                   "out of memory in aten::add.Tensor while recomputing its "
                   "inputs (tensor 7 (op 'aten::relu', op 3)): the budget"));
  EXPECT_TRUE(Says(budget.explain(e, 0, nullptr),
                   "out of memory while recomputing a value (tensor 7"));
  // Without a recomputation under way the message says nothing of one.
  EXPECT_FALSE(Says(budget.explain(dtr::OutOfMemory(100, 40, 500, 450), 0, &op),
                    "recomputing"));
}

// Under a process budget of 800 the runtime's share was 500: 300 bytes
// live outside DTR, and the floor counts them.
TEST(BudgetStateTest, UnderAProcessBudgetTheFloorCountsWhatLivesOutside) {
  pt::BudgetState budget;
  budget.blocks().set(800, BudgetScope::kProcess, std::this_thread::get_id());
  budget.apply();
  const std::string m =
      budget.explain(dtr::OutOfMemory(100, 0, 500, 450), 0, nullptr);
  EXPECT_TRUE(Says(m, "out of memory: the budget of 800"));
  EXPECT_TRUE(Says(m, "floor of at least 850 bytes"));
  EXPECT_TRUE(Says(m, "300 outside DTR"));
  EXPECT_TRUE(Says(m, "stats: allocator_peak_bytes"));
}

}  // namespace
