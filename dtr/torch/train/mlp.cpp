// MLP: 8 x (Linear 256->256 + ReLU) + Linear 256->10. At batch 2048 the
// activations (2 MiB each) dominate the weights (256 KiB each).
#include "dtr/torch/train/models.h"

namespace dtr::pt::train {
namespace {

class Mlp final : public Task {
 public:
  explicit Mlp(std::int64_t batch) : batch_(batch) {
    net_->push_back(torch::nn::Linear(kIn, kWidth));
    net_->push_back(torch::nn::ReLU());
    for (int i = 0; i < kDepth - 1; ++i) {
      net_->push_back(torch::nn::Linear(kWidth, kWidth));
      net_->push_back(torch::nn::ReLU());
    }
    net_->push_back(torch::nn::Linear(kWidth, kClasses));
  }
  torch::nn::Module& module() override { return *net_; }
  std::vector<torch::Tensor> batch(std::int64_t step) override {
    auto gen = data_generator(step);
    return {torch::randn({batch_, kIn}, gen),
            torch::randint(kClasses, {batch_}, gen)};
  }
  torch::Tensor loss(const std::vector<torch::Tensor>& in) override {
    return torch::nn::functional::cross_entropy(net_->forward(in[0]), in[1]);
  }

 private:
  static constexpr std::int64_t kIn = 256, kWidth = 256, kClasses = 10;
  static constexpr int kDepth = 8;
  std::int64_t batch_;
  torch::nn::Sequential net_;
};

}  // namespace

std::unique_ptr<Task> make_mlp(std::int64_t batch) {
  return std::make_unique<Mlp>(batch);
}

}  // namespace dtr::pt::train
