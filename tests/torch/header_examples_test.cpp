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

  auto x = dtr::pt::checkpoint(batch);  // wrap the input
  dtr::pt::Budget guard(64 << 20);      // evict above 64 MiB
  auto loss = torch::nll_loss(model->forward(x), target);
  loss.backward();  // results bitwise identical
  std::cout << dtr::pt::stats().allocator_peak_bytes;

  EXPECT_TRUE(dtr::pt::is_checkpoint(loss));
  EXPECT_FALSE(dtr::pt::is_checkpoint(model->parameters()[0].grad()));
}

// checkpointed_module.h: the holder checkpoints forward()'s tensor
// arguments (as Python's dtr.checkpoint(module)), the module and its
// parameters stay plain, and training through it is bitwise identical.
TEST(TorchHeaderExamplesTest, CheckpointedModuleH) {
  auto train = [](bool use_dtr) {
    torch::manual_seed(3);
    torch::nn::Sequential net(torch::nn::Linear(8, 16), torch::nn::ReLU(),
                              torch::nn::Linear(16, 4));
    auto batch = torch::randn({16, 8});
    auto target = torch::randint(0, 4, {16});
    torch::Tensor out;
    if (use_dtr) {
      auto model = dtr::pt::checkpoint(net);
      dtr::pt::Budget guard(1 << 20);
      out = model->forward(batch);  // `->` reaches the module: plain
      EXPECT_FALSE(dtr::pt::is_checkpoint(out));
      out = model.forward(batch);
      EXPECT_TRUE(dtr::pt::is_checkpoint(out));
      EXPECT_TRUE(dtr::pt::is_checkpoint(model(batch)));
    } else {
      out = net->forward(batch);
    }
    auto loss = torch::nll_loss(torch::log_softmax(out, 1), target);
    loss.backward();
    std::vector<at::Tensor> result{dtr::pt::decheckpoint(loss)};
    for (const auto& p : net->parameters()) {
      EXPECT_FALSE(dtr::pt::is_checkpoint(p.grad()));
      result.push_back(p.grad().clone());
    }
    return result;
  };
  auto plain = train(false);
  auto dtr = train(true);
  ASSERT_EQ(plain.size(), dtr.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_TRUE(torch::equal(plain[i], dtr[i])) << "result " << i;
  }
}

// A module taking a list of tensors gets each one checkpointed, whether the
// list is passed as an lvalue or a temporary.
struct PairSumImpl : torch::nn::Module {
  at::Tensor forward(std::vector<at::Tensor> xs) { return xs[0] + xs[1]; }
};
TORCH_MODULE(PairSum);

TEST(TorchHeaderExamplesTest, CheckpointedModuleTakesTensorLists) {
  auto model = dtr::pt::checkpoint(PairSum());
  std::vector<at::Tensor> xs{torch::ones({4}), torch::ones({4})};
  EXPECT_TRUE(dtr::pt::is_checkpoint(model.forward(xs)));
  EXPECT_TRUE(dtr::pt::is_checkpoint(model(std::vector<at::Tensor>(xs))));
  EXPECT_FALSE(dtr::pt::is_checkpoint(model->forward(xs)));
}

}  // namespace
