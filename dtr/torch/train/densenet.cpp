// DenseNet (Huang et al. 2017) block stack for 32x32 inputs: 3 dense blocks
// of 6 BN-ReLU-Conv3x3 layers (growth 12) joined by transitions. Each layer
// concatenates all earlier features, so activations dominate memory.
#include "dtr/torch/train/models.h"

namespace dtr::pt::train {
namespace {

namespace nn = torch::nn;

struct DenseLayerImpl : nn::Module {
  DenseLayerImpl(std::int64_t in, std::int64_t growth)
      : bn(in), conv(nn::Conv2dOptions(in, growth, 3).padding(1).bias(false)) {
    register_module("bn", bn);
    register_module("conv", conv);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({x, conv(torch::relu(bn(x)))}, 1);
  }
  nn::BatchNorm2d bn;
  nn::Conv2d conv;
};
TORCH_MODULE(DenseLayer);

struct TransitionImpl : nn::Module {
  TransitionImpl(std::int64_t in, std::int64_t out)
      : bn(in), conv(nn::Conv2dOptions(in, out, 1).bias(false)) {
    register_module("bn", bn);
    register_module("conv", conv);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::avg_pool2d(conv(torch::relu(bn(x))), 2);
  }
  nn::BatchNorm2d bn;
  nn::Conv2d conv;
};
TORCH_MODULE(Transition);

class DenseNetTask final : public CifarTask<nn::Sequential> {
 public:
  explicit DenseNetTask(std::int64_t batch) : CifarTask(batch) {
    constexpr std::int64_t kGrowth = 12, kLayers = 6;
    std::int64_t c = 2 * kGrowth;
    net_->push_back(
        nn::Conv2d(nn::Conv2dOptions(3, c, 3).padding(1).bias(false)));
    for (int block = 0; block < 3; ++block) {
      for (int i = 0; i < kLayers; ++i) {
        net_->push_back(DenseLayer(c, kGrowth));
        c += kGrowth;
      }
      if (block < 2) {
        net_->push_back(Transition(c, c / 2));
        c /= 2;
      }
    }
    net_->push_back(nn::BatchNorm2d(c));
    net_->push_back(nn::Functional(torch::relu));
    net_->push_back(nn::AdaptiveAvgPool2d(1));
    net_->push_back(nn::Flatten());
    net_->push_back(nn::Linear(c, 10));
  }
};

}  // namespace

std::unique_ptr<Task> make_densenet(std::int64_t batch) {
  return std::make_unique<DenseNetTask>(batch);
}

}  // namespace dtr::pt::train
