// Binary TreeLSTM (Tai et al. 2015) over random binary trees whose shape
// changes every step (a dynamic model): leaves read a 64-d input vector,
// internal nodes combine their two children; the root is classified.
//
// A step draws one random tree over 32 leaves and runs `batch` examples
// through it together (the examples of a step share a shape, as when
// sentences are bucketed by parse): every node holds a batch x 128 state,
// so activations, not the weights' gradients, dominate memory. The tree's
// shape comes from the step number only, so plain and DTR runs agree.
#include <functional>
#include <random>

#include "dtr/torch/train/models.h"

namespace dtr::pt::train {
namespace {

namespace nn = torch::nn;

class TreeLstmTask final : public Task {
 public:
  explicit TreeLstmTask(std::int64_t batch) : batch_(batch) {
    net_->register_module("leaf", leaf_);
    net_->register_module("node", node_);
    net_->register_module("out", out_);
  }
  nn::Module& module() override { return *net_; }
  std::vector<torch::Tensor> batch(std::int64_t step) override {
    auto gen = data_generator(step);
    step_ = step;
    return {torch::randn({kLeaves, batch_, kIn}, gen),
            torch::randint(kClasses, {batch_}, gen)};
  }
  torch::Tensor loss(const std::vector<torch::Tensor>& in) override {
    std::mt19937 rng(static_cast<std::uint32_t>(1000 + step_));
    // A random binary tree over leaves [lo, hi): split at a random point.
    std::function<std::pair<torch::Tensor, torch::Tensor>(int, int)> build =
        [&](int lo, int hi) -> std::pair<torch::Tensor, torch::Tensor> {
      if (hi - lo == 1) {
        auto g = leaf_(in[0][lo]).chunk(3, 1);
        auto c = torch::sigmoid(g[0]) * torch::tanh(g[2]);
        return {torch::sigmoid(g[1]) * torch::tanh(c), c};
      }
      int mid = lo + 1 + static_cast<int>(rng() % (hi - lo - 1));
      auto [hl, cl] = build(lo, mid);
      auto [hr, cr] = build(mid, hi);
      auto g = node_(torch::cat({hl, hr}, 1)).chunk(5, 1);
      auto c = torch::sigmoid(g[0]) * torch::tanh(g[4]) +
               torch::sigmoid(g[1]) * cl + torch::sigmoid(g[2]) * cr;
      return {torch::sigmoid(g[3]) * torch::tanh(c), c};
    };
    auto root = build(0, kLeaves).first;
    return nn::functional::cross_entropy(out_(root), in[1]);
  }

 private:
  static constexpr std::int64_t kIn = 64, kHidden = 128, kClasses = 5;
  static constexpr int kLeaves = 32;
  std::int64_t batch_;
  std::int64_t step_ = 0;
  nn::Sequential net_;
  nn::Linear leaf_{kIn, 3 * kHidden};
  nn::Linear node_{2 * kHidden, 5 * kHidden};
  nn::Linear out_{kHidden, kClasses};
};

}  // namespace

std::unique_ptr<Task> make_treelstm(std::int64_t batch) {
  return std::make_unique<TreeLstmTask>(batch);
}

}  // namespace dtr::pt::train
