// A training job runs for 10^5 steps: lineage nothing can reach any more
// must be forgotten (Note [Forgetting dead cells]) so that the runtime's
// graph -- and with it memory and per-step time -- stays flat. 10^4 steps
// of a small model under a budget that forces evictions and replays.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "dtr/torch/dtr_torch.h"

namespace {

namespace pt = dtr::pt;

TEST(LongRunTest, GraphStaysFlatOverTenThousandSteps) {
  torch::manual_seed(2);
  torch::nn::Sequential net;
  for (int i = 0; i < 4; ++i) {
    net->push_back(torch::nn::Linear(16, 16));
    net->push_back(torch::nn::Tanh());
  }
  torch::optim::SGD opt(net->parameters(),
                        torch::optim::SGDOptions(0.01).momentum(0.9));
  auto x = torch::randn({64, 16});
  auto t = torch::randn({64, 16});
  auto step = [&] {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(pt::checkpoint(x)), t);
    loss.backward();
    opt.step();
    return loss.item<float>();
  };
  step();
  pt::reset_peak();
  step();
  pt::Budget budget(pt::stats().dtr_peak_bytes * 6 / 10);
  pt::reset_peak();
  const auto start = pt::stats();
  pt::Stats warm;
  constexpr int kSteps = 10000;
  for (int i = 0; i < kSteps; ++i) {
    step();
    if (i == 100) warm = pt::stats();
  }
  const auto end = pt::stats();
  EXPECT_GT(end.remat_ops, start.remat_ops + kSteps);  // it did rematerialize
  EXPECT_LE(end.dtr_peak_bytes, pt::budget());
  // Flat: no more live records after 10^4 steps than after 100.
  EXPECT_LE(end.graph_tensors, warm.graph_tensors + 8);
  EXPECT_LE(end.graph_ops, warm.graph_ops + 8);
  EXPECT_LE(end.graph_storages, warm.graph_storages + 8);
  EXPECT_LT(end.graph_tensors, 1000);  // a step is ~60 ops, not 600 000
}

}  // namespace
