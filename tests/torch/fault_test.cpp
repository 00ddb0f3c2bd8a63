// Errors in the middle of a rematerialization through LibTorch: a replay
// that refuses to run (its plain input changed) and a budget exhausted
// deep in a nested rematerialization. After either, the runtime must be as
// usable as before: no input left locked (everything evictable again), the
// accounting back where it was, and values recomputed bit for bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "dtr/core/error.h"
#include "dtr/torch/dtr_torch.h"
#include "tests/torch/torch_test_support.h"

namespace {

namespace pt = dtr::pt;
using FaultTest = dtr::pt::testing::BudgetRestoringTest;
using dtr::pt::testing::plain;

// A chain of n tanh layers on a checkpointed input; every value held.
std::vector<torch::Tensor> chain(const torch::Tensor& x, int n) {
  std::vector<torch::Tensor> out{pt::checkpoint(x)};
  for (int i = 0; i < n; ++i) out.push_back(torch::tanh(out.back() * 1.01));
  return out;
}

TEST_F(FaultTest, AFailedReplayDeepInAChainLeavesNothingLocked) {
  auto w = torch::randn({32, 32});
  auto x = pt::checkpoint(torch::randn({32, 32}));
  auto first = torch::mm(x, w);  // reads plain w
  std::vector<torch::Tensor> values{first};
  for (int i = 0; i < 6; ++i) values.push_back(torch::tanh(values.back()));
  pt::evict_all();
  w.add_(1);  // the kernel never sees it: replaying `first` must refuse
  EXPECT_THROW((void)plain(values.back() * 1), std::exception);
  // Nothing stayed locked: everything resident is evictable again.
  pt::evict_all();
  EXPECT_EQ(pt::stats().dtr_bytes, 0);
  // A fresh computation works, also under a budget that evicts.
  auto fresh = chain(torch::randn({32, 32}), 6);
  const auto fresh_end = plain(fresh.back()).clone();
  pt::evict_all();
  {
    pt::Budget guard(3 * 32 * 32 * 4);
    EXPECT_TRUE(torch::equal(plain(fresh.back() * 1), fresh_end * 1));
  }
}

TEST_F(FaultTest, OutOfMemoryInANestedRematerializationThenARetry) {
  torch::manual_seed(2);
  auto x = torch::randn({64, 64});
  auto values = chain(x, 12);
  std::vector<torch::Tensor> expect;
  for (auto& v : values) expect.push_back(plain(v).clone());
  pt::evict_all();
  const std::int64_t one = 64 * 64 * 4;
  {
    // The last value needs its input, which needs its input...: with room
    // for one value the nested rematerialization cannot finish.
    pt::Budget guard(one);
    try {
      (void)plain(values.back());
      FAIL() << "expected an out-of-memory error";
    } catch (const dtr::OutOfMemory& e) {
      EXPECT_NE(std::string(e.what()).find("floor"), std::string::npos)
          << e.what();
    }
  }
  pt::evict_all();
  EXPECT_EQ(pt::stats().dtr_bytes, 0);  // nothing left locked or leaked
  pt::Budget guard(3 * one);
  for (std::size_t i = values.size(); i-- > 1;) {
    EXPECT_TRUE(torch::equal(plain(values[i]), expect[i])) << "value " << i;
  }
}

}  // namespace
