// The usage example at the top of dtr_torch.h, verbatim, so it keeps
// compiling and doing what it says.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <iostream>

#include "dtr/torch/dtr_torch.h"

namespace {

TEST(TorchHeaderExamplesTest, DtrTorchH) {
  torch::nn::Sequential model(torch::nn::Linear(8, 4),
                              torch::nn::LogSoftmax(1));
  auto batch = torch::randn({16, 8});
  auto target = torch::randint(0, 4, {16});

  auto x = dtr::pt::checkpoint(batch);       // wrap the input
  dtr::pt::Budget guard(64 << 20);          // evict above 64 MiB
  auto loss = torch::nll_loss(model->forward(x), target);
  loss.backward();                          // results bitwise identical
  std::cout << dtr::pt::stats().allocator_peak_bytes;

  EXPECT_TRUE(dtr::pt::is_checkpoint(loss));
  EXPECT_FALSE(dtr::pt::is_checkpoint(model->parameters()[0].grad()));
}

}  // namespace
