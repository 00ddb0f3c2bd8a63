// Tests of BackwardPasses (dtr/torch/backward_passes.h): when the lineage
// cut runs. One callback per pass however many gradients ask; a dropped
// callback re-arms; a nested pass hands its cut to the outer one.
#include "dtr/torch/backward_passes.h"

#include <gtest/gtest.h>

#include <thread>

namespace {

using dtr::pt::BackwardPasses;

TEST(BackwardPassesTest, OneCallbackPerPassHoweverManyGradientsAsk) {
  BackwardPasses passes;
  const auto self = std::this_thread::get_id();
  const auto first = passes.want_cut(self);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(passes.want_cut(self).has_value());  // already queued
  EXPECT_TRUE(passes.pass_ended(self));
  const auto second = passes.want_cut(self);  // the next pass queues again
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(*first, *second);
}

TEST(BackwardPassesTest, ADroppedCallbackRearmsOnlyIfItIsTheLatest) {
  BackwardPasses passes;
  const auto self = std::this_thread::get_id();
  const auto old = passes.want_cut(self);
  ASSERT_TRUE(passes.pass_ended(self));
  ASSERT_TRUE(passes.want_cut(self).has_value());
  passes.callback_dropped(self, *old);  // a stale token: still queued
  EXPECT_FALSE(passes.want_cut(self).has_value());
  passes.callback_dropped(self, *old + 1);  // the queued one failed
  EXPECT_TRUE(passes.want_cut(self).has_value());
}

TEST(BackwardPassesTest, ANestedPassDefersItsCutToTheOuterPass) {
  BackwardPasses passes;
  const auto self = std::this_thread::get_id();
  passes.enter_nested(self);
  passes.enter_nested(self);
  ASSERT_TRUE(passes.want_cut(self).has_value());
  EXPECT_FALSE(passes.pass_ended(self));   // the inner pass: deferred
  EXPECT_FALSE(passes.exit_nested(self));  // still one level in
  EXPECT_TRUE(passes.exit_nested(self));   // outermost: cut at outer end
  ASSERT_TRUE(passes.want_cut(self).has_value());
  EXPECT_TRUE(passes.pass_ended(self));
}

TEST(BackwardPassesTest, ThreadsHaveTheirOwnPasses) {
  BackwardPasses passes;
  const auto self = std::this_thread::get_id();
  std::thread::id other;
  std::thread([&] { other = std::this_thread::get_id(); }).join();
  passes.enter_nested(other);
  ASSERT_TRUE(passes.want_cut(self).has_value());
  ASSERT_TRUE(passes.want_cut(other).has_value());
  EXPECT_TRUE(passes.pass_ended(self));
  EXPECT_FALSE(passes.pass_ended(other));
}

}  // namespace
