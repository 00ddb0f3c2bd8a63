// Semantics of checkpointed tensors: every test compares against plain
// LibTorch bit for bit, with and without a budget that forces evictions.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

#include "dtr/core/error.h"
#include "dtr/torch/dtr_torch.h"
#include "tests/torch/torch_test_support.h"

namespace {

namespace pt = dtr::pt;

// Every test restores the unlimited budget it may change.
using CheckpointTensorTest = dtr::pt::testing::BudgetRestoringTest;
using dtr::pt::testing::plain;

TEST_F(CheckpointTensorTest, WrapsAndUnwraps) {
  auto x = torch::randn({4, 5});
  auto c = pt::checkpoint(x);
  EXPECT_TRUE(pt::is_checkpoint(c));
  EXPECT_FALSE(pt::is_checkpoint(x));
  EXPECT_EQ(c.sizes(), x.sizes());
  auto y = (c * 2 + 1).relu();
  EXPECT_TRUE(pt::is_checkpoint(y));
  EXPECT_TRUE(torch::equal(plain(y), (x * 2 + 1).relu()));
  EXPECT_EQ(y.sum().item<float>(), (x * 2 + 1).relu().sum().item<float>());
  std::ostringstream printed, expected;
  printed << y;  // printing goes through a plain copy
  expected << (x * 2 + 1).relu();
  EXPECT_EQ(printed.str(), expected.str());
}

// Note [Escapes]: model code writing checkpointed values into a plain
// tensor is counted (and warned about); the optimizer doing the same to
// parameters with grad mode off is not.
TEST_F(CheckpointTensorTest, PlainTensorWrittenInPlaceIsReportedAsAnEscape) {
  auto x = torch::randn({8, 8});
  auto c = pt::checkpoint(x);
  const auto before = pt::stats().escapes;
  auto state = torch::zeros({8, 8});
  state.add_(c);  // grad mode on: model code
  EXPECT_FALSE(pt::is_checkpoint(state));
  EXPECT_TRUE(torch::equal(state, x));
  EXPECT_EQ(pt::stats().escapes, before + 1);
  {
    torch::NoGradGuard no_grad;  // an optimizer-style update
    state.add_(c);
  }
  EXPECT_EQ(pt::stats().escapes, before + 1);
  EXPECT_TRUE(torch::equal(state, x * 2));
}

TEST_F(CheckpointTensorTest, RecomputesEvictedValuesIdentically) {
  auto x = torch::randn({64, 64});
  auto c = pt::checkpoint(x);
  std::vector<torch::Tensor> ys, expect;
  auto a = c, b = x;
  for (int i = 0; i < 8; ++i) {
    a = torch::tanh(torch::matmul(a, c));
    b = torch::tanh(torch::matmul(b, x));
    ys.push_back(a);
    expect.push_back(b);
  }
  pt::Budget budget(64 * 64 * 4 * 4);  // room for ~4 of the 9 values
  for (int i = 7; i >= 0; --i) {
    EXPECT_TRUE(torch::equal(plain(ys[i] * 1), expect[i])) << i;
  }
  EXPECT_GT(pt::stats().remat_ops, 0u);
}

TEST_F(CheckpointTensorTest, ViewsShareTheirBaseAndSurviveEviction) {
  auto x = torch::arange(24, torch::kFloat).reshape({4, 6});
  auto base = pt::checkpoint(x) * 3;
  auto row = base.select(0, 1);
  auto cols = base.narrow(1, 2, 3).t();
  EXPECT_TRUE(torch::equal(plain(row), (x * 3).select(0, 1)));
  const auto replays = pt::stats().remat_ops;
  pt::evict_all();
  EXPECT_TRUE(torch::equal(plain(cols), (x * 3).narrow(1, 2, 3).t()));
  EXPECT_TRUE(torch::equal(plain(row), (x * 3).select(0, 1)));
  // Everything was evicted: the product once (for both views), and each
  // view op once (select, narrow, t).
  EXPECT_EQ(pt::stats().remat_ops, replays + 4);
}

TEST_F(CheckpointTensorTest, InPlaceOnAViewWritesThroughToTheBase) {
  auto x = torch::randn({4, 6});
  auto base = pt::checkpoint(x).clone();
  auto view = base.narrow(0, 1, 2);
  view.mul_(10);
  base.add_(1);
  auto expect_base = x.clone();
  expect_base.narrow(0, 1, 2).mul_(10);
  expect_base.add_(1);
  EXPECT_TRUE(torch::equal(plain(base), expect_base));
  EXPECT_TRUE(torch::equal(plain(view), expect_base.narrow(0, 1, 2)));
  pt::evict_all();
  auto y = base * 2;  // base must not be recomputed from the old values
  EXPECT_TRUE(torch::equal(plain(y), expect_base * 2));
}

// A write into a gapped buffer ([16, 24] with row stride 25, as autograd
// makes for nn.GRU's gradients) keeps its layout when it is copied on
// write and when it is replayed: a contiguous copy made nn.GRU's backward
// round differently under Adam, a silent difference from plain PyTorch.
TEST_F(CheckpointTensorTest, CopyOnWriteAndReplayKeepAGappedLayout) {
  auto x = torch::randn({16, 24});
  auto c = pt::checkpoint(x);
  auto buf = c.new_empty_strided({16, 24}, {25, 1});
  auto src = torch::sin(c);
  buf.copy_(src);
  auto twice = buf * 2;
  EXPECT_EQ(buf.strides(), (std::vector<std::int64_t>{25, 1}));
  EXPECT_EQ(plain(buf).strides(), (std::vector<std::int64_t>{25, 1}));
  pt::evict_all();
  const auto replays = pt::stats().remat_ops;
  auto again = plain(buf);
  EXPECT_GT(pt::stats().remat_ops, replays);
  EXPECT_EQ(again.strides(), (std::vector<std::int64_t>{25, 1}));
  EXPECT_TRUE(torch::equal(again, torch::sin(x)));
  EXPECT_TRUE(torch::equal(plain(twice), torch::sin(x) * 2));
}

TEST_F(CheckpointTensorTest, InPlaceCopyOnWriteKeepsLineageCorrect) {
  auto x = torch::randn({32, 32});
  auto c = pt::checkpoint(x);
  auto a = torch::sin(c);
  auto b = a * 2;  // reads a's old value
  a.add_(5);       // copy-on-write: b's lineage keeps the old a
  pt::evict_all();
  EXPECT_TRUE(torch::equal(plain(b), torch::sin(x) * 2));
  EXPECT_TRUE(torch::equal(plain(a), torch::sin(x) + 5));
}

TEST_F(CheckpointTensorTest, DropoutReplaysTheSameMask) {
  torch::manual_seed(7);
  auto x = torch::ones({256, 256});
  auto c = pt::checkpoint(x);
  auto d = torch::dropout(c * 1, 0.5, /*train=*/true);
  auto first = plain(d).clone();
  auto after = torch::rand({3});  // the stream goes on
  const auto remats = pt::stats().remat_ops;
  pt::evict_all();
  EXPECT_TRUE(torch::equal(plain(d * 1), first));  // replayed mask
  EXPECT_GT(pt::stats().remat_ops, remats);
  // Replays never perturb the program's random stream.
  torch::manual_seed(7);
  auto ref = torch::dropout(x * 1, 0.5, true);
  EXPECT_TRUE(torch::equal(ref, first));
  EXPECT_TRUE(torch::equal(torch::rand({3}), after));
}

TEST_F(CheckpointTensorTest, MultiOutputOperators) {
  auto x = torch::randn({16, 8});
  auto c = pt::checkpoint(x);
  auto [values, indices] = torch::max(c * 1, 1);
  auto parts = torch::split(c * 2, 3, 0);
  auto [ev, ei] = torch::max(x * 1, 1);
  pt::evict_all();
  EXPECT_TRUE(torch::equal(plain(values), ev));
  EXPECT_TRUE(torch::equal(plain(indices), ei));
  ASSERT_EQ(parts.size(), 6u);
  EXPECT_TRUE(torch::equal(plain(parts[5]), (x * 2).split(3, 0)[5]));
}

TEST_F(CheckpointTensorTest, BatchNormRunningStatsUpdatedOnce) {
  torch::nn::BatchNorm1d bn(8);
  torch::nn::BatchNorm1d ref(8);
  auto x = torch::randn({32, 8});
  auto c = pt::checkpoint(x);
  auto y = bn(c * 1);
  auto expect = ref(x * 1);
  const auto remats = pt::stats().remat_ops;
  pt::evict_all();
  auto z = (y * 2).sum();  // replays batch norm (y was evicted)
  (void)z;
  EXPECT_GT(pt::stats().remat_ops, remats);
  EXPECT_TRUE(torch::equal(plain(y), expect));
  EXPECT_TRUE(torch::equal(bn->running_mean, ref->running_mean));
  EXPECT_TRUE(torch::equal(bn->running_var, ref->running_var));
}

TEST_F(CheckpointTensorTest, UnsupportedOperatorIsNamed) {
  auto c = pt::checkpoint(torch::randn({4}));
  auto other = torch::randn({8});
  try {
    c.set_(other);
    FAIL() << "set_ should be refused";
  } catch (const pt::UnsupportedOperator& e) {
    EXPECT_NE(std::string(e.what()).find("aten::set_"), std::string::npos)
        << e.what();
  }
}

TEST_F(CheckpointTensorTest, BudgetTooSmallReportsBytesAndStaysUsable) {
  auto x = torch::randn({256, 256});  // 256 KiB
  auto c = pt::checkpoint(x);
  {
    // The input is outside the budget (the program holds it); the product
    // needs 256 KiB, more than the budget.
    pt::Budget budget(200 * 1024);
    try {
      auto y = torch::matmul(c, c);
      FAIL() << "expected OutOfMemory";
    } catch (const dtr::OutOfMemory& e) {
      EXPECT_EQ(e.needed_bytes(), 256 * 256 * 4);
      // Note [The floor]: the message names the operator and the floor.
      const std::string what = e.what();
      EXPECT_NE(what.find("in aten::mm"), std::string::npos) << what;
      EXPECT_NE(what.find("floor of at least 262144 bytes"), std::string::npos)
          << what;
      // The floor is this operator's: the hint says it is a lower bound
      // and names a budget that fits, never one that only might.
      EXPECT_NE(what.find("at least 262144 bytes (a lower bound"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("a run without a budget (stats: dtr_peak_bytes) "
                          "is a budget that fits"),
                std::string::npos)
          << what;
    }
  }
  auto y = torch::matmul(c, c);  // usable afterwards
  EXPECT_TRUE(torch::equal(plain(y), torch::matmul(x, x)));
}

TEST_F(CheckpointTensorTest, TrainingIsBitwiseIdenticalUnderABudget) {
  auto run = [](bool wrap, std::int64_t budget) {
    torch::manual_seed(3);
    torch::nn::Sequential net(torch::nn::Linear(32, 128), torch::nn::ReLU(),
                              torch::nn::Dropout(0.2),
                              torch::nn::Linear(128, 128), torch::nn::ReLU(),
                              torch::nn::Linear(128, 10));
    torch::optim::SGD opt(net->parameters(),
                          torch::optim::SGDOptions(0.05).momentum(0.9));
    auto x = torch::randn({2048, 32});
    auto t = torch::randint(10, {2048});
    pt::Budget guard(budget);
    std::vector<float> losses;
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      auto in = wrap ? pt::checkpoint(x) : x;
      auto loss = torch::nn::functional::cross_entropy(net->forward(in), t);
      loss.backward();
      opt.step();
      losses.push_back(loss.item<float>());
    }
    std::vector<torch::Tensor> params;
    for (auto& p : net->parameters()) params.push_back(p.detach().clone());
    return std::make_pair(losses, params);
  };
  auto [l0, p0] = run(false, pt::kUnlimited);
  pt::reset_peak();
  auto [l1, p1] = run(true, pt::kUnlimited);
  const auto free_peak = pt::stats().dtr_peak_bytes;
  auto [l2, p2] = run(true, free_peak * 8 / 10);
  EXPECT_EQ(l0, l1);
  EXPECT_EQ(l0, l2);
  for (std::size_t i = 0; i < p0.size(); ++i) {
    EXPECT_TRUE(torch::equal(p0[i], p1[i])) << i;
    EXPECT_TRUE(torch::equal(p0[i], p2[i])) << i;
  }
}

}  // namespace
