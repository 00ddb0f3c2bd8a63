// The mechanisms behind "ordinary programs run unchanged": each
// test reproduces one way a user's program went wrong -- lost gradients,
// replays against updated weights, foreach ops, restriding, writes into
// views, composite kernels, split clones, locks left after an error, the
// process budget -- and compares against plain LibTorch bit for bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "dtr/core/error.h"
#include "dtr/torch/dtr_torch.h"
#include "tests/torch/torch_test_support.h"

namespace {

namespace pt = dtr::pt;

// Every test restores the unlimited budget it may change.
using OrdinaryProgramsTest = dtr::pt::testing::BudgetRestoringTest;
using dtr::pt::testing::plain;

// Note [Differentiable checkpoint]
TEST_F(OrdinaryProgramsTest,
       CheckpointOfATensorThatRequiresGradPassesGradients) {
  auto w = torch::randn({8, 8}, torch::requires_grad());
  auto c = pt::checkpoint(w);
  EXPECT_TRUE(pt::is_checkpoint(c));
  EXPECT_TRUE(c.grad_fn() != nullptr);
  (c * c).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_FALSE(pt::is_checkpoint(w.grad()));  // a plain tensor's gradient
  EXPECT_TRUE(torch::equal(w.grad(), 2 * w.detach()));
}

TEST_F(OrdinaryProgramsTest, APlainModuleFeedingACheckpointedOneStillTrains) {
  auto run = [](bool use_dtr) {
    torch::manual_seed(1);
    torch::nn::Linear a(16, 32), b(32, 4);
    auto x = torch::randn({8, 16});
    auto h = torch::relu(a->forward(x));
    if (use_dtr) h = pt::checkpoint(h);  // what checkpoint(module B) does
    b->forward(h).pow(2).sum().backward();
    return a->weight.grad().clone();
  };
  auto expect = run(false);
  auto got = run(true);
  EXPECT_GT(expect.abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::equal(expect, got));
}

// Note [Plain parameter gradients]: the optimizer sees plain gradients and
// Adam's all-plain parameter update cannot make a replay wrong.
TEST_F(OrdinaryProgramsTest, AdamUnderATightBudgetIsBitwiseIdentical) {
  auto run = [](bool use_dtr, std::int64_t budget) {
    torch::manual_seed(3);
    torch::nn::Sequential net;  // a chain: activations dominate
    for (int i = 0; i < 8; ++i) {
      net->push_back(torch::nn::Linear(64, 64));
      net->push_back(torch::nn::Tanh());
    }
    net->push_back(torch::nn::Linear(64, 10));
    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-2));
    auto x = torch::randn({1024, 64});
    auto t = torch::randint(10, {1024});
    pt::Budget guard(budget);
    std::vector<float> losses;
    for (int step = 0; step < 4; ++step) {
      opt.zero_grad();
      auto in = use_dtr ? pt::checkpoint(x) : x;
      auto loss = torch::nn::functional::cross_entropy(net->forward(in), t);
      loss.backward();
      for (auto& p : net->parameters()) {
        EXPECT_FALSE(pt::is_checkpoint(p.grad()));
      }
      if (use_dtr) pt::evict_all();  // nothing may be rebuilt from new weights
      opt.step();
      losses.push_back(loss.item<float>());
    }
    std::vector<torch::Tensor> params;
    for (auto& p : net->parameters()) params.push_back(p.detach().clone());
    return std::make_pair(losses, params);
  };
  auto [l0, p0] = run(false, pt::kUnlimited);
  pt::reset_peak();
  run(true, pt::kUnlimited);
  const auto peak = pt::stats().dtr_peak_bytes;
  auto [l1, p1] = run(true, peak * 4 / 10);
  EXPECT_GT(pt::stats().remat_ops, 0u);
  EXPECT_EQ(l0, l1);
  for (std::size_t i = 0; i < p0.size(); ++i) {
    EXPECT_TRUE(torch::equal(p0[i], p1[i])) << i;
  }
}

// Note [Stale plain inputs]: the safety net, on the reproduction.
TEST_F(OrdinaryProgramsTest,
       ReplayAfterAPlainOnlyWriteIsAnErrorNotAWrongValue) {
  auto x = pt::checkpoint(torch::randn({16, 16}));
  auto w = torch::randn({16, 16});
  auto y = torch::tanh(torch::mm(x, w));
  pt::evict_all();
  w.add_(1);  // plain tensors only: the kernel never sees this write
  try {
    (void)plain(y * 1);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("aten::mm"), std::string::npos) << what;
    EXPECT_NE(what.find("'mat2'"), std::string::npos) << what;
  }
}

// Note [Written tensor lists]
TEST_F(OrdinaryProgramsTest, ForeachInPlaceOpsOnCheckpointedLists) {
  std::vector<torch::Tensor> a0, b0, a, b;
  for (int i = 0; i < 3; ++i) {
    a0.push_back(torch::randn({5}));
    b0.push_back(torch::randn({5}));
    a.push_back(pt::checkpoint(a0.back()) * 1);
    b.push_back(pt::checkpoint(b0.back()) * 1);
  }
  auto read_before = a[0] * 2;  // lineage reads a[0]'s old value
  at::_foreach_add_(a, b, 0.5);
  at::_foreach_mul_(a0, 1.0);  // a0 stays a0; expected values:
  pt::evict_all();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(pt::is_checkpoint(a[i]));
    EXPECT_TRUE(torch::equal(plain(a[i]), a0[i] + b0[i] * 0.5)) << i;
  }
  EXPECT_TRUE(torch::equal(plain(read_before), a0[0] * 2));
}

// Note [In-place view operators]
TEST_F(OrdinaryProgramsTest, InPlaceRestridingKeepsValuesAndLineage) {
  auto x =
      torch::randn({2, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast);
  auto c = pt::checkpoint(x);
  auto pooled = torch::adaptive_avg_pool2d(c, {1, 1});  // uses as_strided_
  auto expect = torch::adaptive_avg_pool2d(x, {1, 1});
  EXPECT_EQ(pooled.strides(), expect.strides());
  auto t = c * 1;
  t.transpose_(0, 1).unsqueeze_(0).squeeze_(0);
  auto te = (x * 1).transpose_(0, 1).unsqueeze_(0).squeeze_(0);
  auto m = pt::checkpoint(x).flatten(0, 2) * 1;
  m.t_();
  auto me = (x.flatten(0, 2) * 1).t_();
  pt::evict_all();
  EXPECT_TRUE(torch::equal(plain(pooled), expect));
  EXPECT_EQ(t.sizes(), te.sizes());
  EXPECT_EQ(t.strides(), te.strides());
  EXPECT_TRUE(torch::equal(plain(t), te));
  EXPECT_EQ(m.strides(), me.strides());
  EXPECT_TRUE(torch::equal(plain(m), me));
}

// Note [Storage copy-on-write]: torchvision's Dropout(inplace=True) after
// flatten writes into a view while lineage reads its storage.
TEST_F(OrdinaryProgramsTest, InPlaceWriteIntoAViewCostsACopyNotALineageCut) {
  auto x = torch::randn({4, 8, 5, 5});
  auto c = pt::checkpoint(x);
  auto pooled = torch::adaptive_avg_pool2d(torch::relu(c), {1, 1});
  auto flat = pooled.flatten(1);
  auto noise = torch::empty_like(flat).fill_(2.0);  // reads flat's storage
  const auto before = pt::stats();
  flat.mul_(noise);
  const auto after = pt::stats();
  EXPECT_EQ(after.lineage_cuts, before.lineage_cuts);
  EXPECT_LE(after.held_bytes - before.held_bytes, 4 * 8 * 4);
  auto pooled_e = torch::adaptive_avg_pool2d(torch::relu(x), {1, 1});
  auto flat_e = pooled_e.flatten(1);
  flat_e.mul_(2.0);
  pt::evict_all();
  EXPECT_TRUE(torch::equal(plain(flat), flat_e));
  EXPECT_TRUE(torch::equal(plain(pooled), pooled_e));  // the base sees it
}

// Note [Composite kernels pre-empt the fallback]: a checkpointed tensor
// takes the CPU kernel, not the decomposition.
TEST_F(OrdinaryProgramsTest, OpsWithACpuKernelRunItNotTheirDecomposition) {
  torch::manual_seed(5);
  auto g = torch::randn({64, 257});
  auto x = torch::randn({64, 257});
  auto expect = at::silu_backward(g, x);
  auto got = at::silu_backward(pt::checkpoint(g), pt::checkpoint(x));
  EXPECT_TRUE(torch::equal(plain(got), expect));
}

// Note [unsafe_split]: the clones keep the layout the kernels see.
TEST_F(OrdinaryProgramsTest, RecurrentCellsAreBitwiseIdentical) {
  torch::manual_seed(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int batch = 1 + trial % 7, hidden = 3 + trial;
    auto x = torch::randn({batch, 5});
    auto h = torch::randn({batch, hidden});
    auto w_ih = torch::randn({3 * hidden, 5});
    auto w_hh = torch::randn({3 * hidden, hidden});
    auto expect = torch::gru_cell(x, h, w_ih, w_hh);
    auto got =
        torch::gru_cell(pt::checkpoint(x), pt::checkpoint(h), w_ih, w_hh);
    ASSERT_TRUE(torch::equal(plain(got), expect)) << batch << "x" << hidden;
    auto [hy, cy] = torch::lstm_cell(
        pt::checkpoint(x), {pt::checkpoint(h), pt::checkpoint(h)},
        torch::cat({w_ih, w_ih.narrow(0, 0, hidden)}),
        torch::cat({w_hh, w_hh.narrow(0, 0, hidden)}));
    auto [hy_e, cy_e] = torch::lstm_cell(
        x, {h, h}, torch::cat({w_ih, w_ih.narrow(0, 0, hidden)}),
        torch::cat({w_hh, w_hh.narrow(0, 0, hidden)}));
    ASSERT_TRUE(torch::equal(plain(hy), hy_e));
    ASSERT_TRUE(torch::equal(plain(cy), cy_e));
  }
}

// CallGuard: an operator that throws after its inputs were locked leaves
// them unlocked, so they can be evicted afterwards.
TEST_F(OrdinaryProgramsTest, AnOperatorThatThrowsReleasesItsInputs) {
  auto a = pt::checkpoint(torch::randn({4, 5})) * 1;
  auto b = pt::checkpoint(torch::randn({6, 7})) * 1;
  EXPECT_THROW((void)torch::mm(a, b), std::exception);
  pt::evict_all();
  EXPECT_EQ(pt::stats().dtr_bytes, 0);
  EXPECT_EQ(plain(a).size(1), 5);
}

// Note [What a budget bounds]: a process budget makes room for plain
// allocations too, by evicting checkpointed values.
TEST_F(OrdinaryProgramsTest, AProcessBudgetBoundsPlainAllocationsToo) {
  auto c = pt::checkpoint(torch::randn({64, 1024}));  // 256 KiB, outside
  std::vector<torch::Tensor> chain{c};
  for (int i = 0; i < 8; ++i) chain.push_back(torch::tanh(chain.back()));
  const auto base = pt::stats().allocator_bytes;
  const auto evictions = pt::stats().evictions;
  {
    pt::Budget guard(base + 512 * 1024, pt::BudgetScope::kProcess);
    EXPECT_EQ(pt::budget_scope(), pt::BudgetScope::kProcess);
    auto big = torch::ones({256, 1024});  // 1 MiB, plain
    EXPECT_GT(pt::stats().evictions, evictions);
    EXPECT_LE(pt::stats().allocator_bytes, base + 512 * 1024);
    for (std::size_t i = 1; i < chain.size(); ++i) {  // replays still exact
      EXPECT_TRUE(
          torch::equal(plain(chain[i]), torch::tanh(plain(chain[i - 1]))));
      break;
    }
  }
  EXPECT_EQ(pt::budget_scope(), pt::BudgetScope::kCheckpointed);
}

}  // namespace

// Note [rrelu's noise]: the noise rrelu fills (unmarked in its schema) is
// recomputed with the same draws, not from the empty tensor it started as.
TEST_F(OrdinaryProgramsTest, RreluNoiseSurvivesEviction) {
  for (bool in_place : {false, true}) {
    auto run = [&](bool use_dtr, std::int64_t budget) {
      torch::manual_seed(4);
      pt::Budget guard(budget);
      std::vector<torch::Tensor> ws;
      for (int i = 0; i < 6; ++i) {
        ws.push_back((torch::randn({64, 64}) * 0.1).requires_grad_());
      }
      auto x = torch::randn({64, 64});
      auto h = use_dtr ? pt::checkpoint(x) : x;
      for (auto& w : ws) {
        h = torch::mm(h, w);
        h = in_place ? torch::rrelu_(h, 0.1, 0.3, true)
                     : torch::rrelu(h, 0.1, 0.3, true);
      }
      (h * h).sum().backward();
      std::vector<torch::Tensor> grads;
      for (auto& w : ws) grads.push_back(w.grad());
      return grads;
    };
    auto expect = run(false, pt::kUnlimited);
    pt::reset_peak();
    run(true, pt::kUnlimited);
    const std::int64_t peak = pt::stats().dtr_peak_bytes;
    const std::uint64_t evictions = pt::stats().evictions;
    auto got = run(true, peak / 2);
    EXPECT_GT(pt::stats().evictions, evictions);
    for (std::size_t i = 0; i < expect.size(); ++i) {
      EXPECT_TRUE(torch::equal(expect[i], got[i]))
          << "in_place " << in_place << " layer " << i;
    }
  }
}
