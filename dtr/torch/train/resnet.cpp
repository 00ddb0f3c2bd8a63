// CIFAR-style ResNet-32 (He et al. 2016, §4.2): 3 stages x 5 basic blocks,
// 16/32/64 channels, batch norm, 32x32 inputs, 10 classes.
#include "dtr/torch/train/models.h"

namespace dtr::pt::train {
namespace {

namespace nn = torch::nn;

struct BasicBlockImpl : nn::Module {
  BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride)
      : conv1(nn::Conv2dOptions(in, out, 3)
                  .stride(stride)
                  .padding(1)
                  .bias(false)),
        bn1(out),
        conv2(nn::Conv2dOptions(out, out, 3).padding(1).bias(false)),
        bn2(out) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    if (stride != 1 || in != out) {
      shortcut = nn::Sequential(
          nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
          nn::BatchNorm2d(out));
      register_module("shortcut", shortcut);
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = torch::relu(bn1(conv1(x)));
    y = bn2(conv2(y));
    return torch::relu(y + (shortcut.is_empty() ? x : shortcut->forward(x)));
  }
  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(BasicBlock);

struct ResNet32Impl : nn::Module {
  ResNet32Impl()
      : conv(nn::Conv2dOptions(3, 16, 3).padding(1).bias(false)),
        bn(16),
        fc(64, 10) {
    register_module("conv", conv);
    register_module("bn", bn);
    std::int64_t in = 16;
    for (std::int64_t out : {16, 32, 64}) {
      for (int i = 0; i < 5; ++i) {
        std::int64_t stride = (i == 0 && out != 16) ? 2 : 1;
        blocks->push_back(BasicBlock(in, out, stride));
        in = out;
      }
    }
    register_module("blocks", blocks);
    register_module("fc", fc);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = torch::relu(bn(conv(x)));
    y = blocks->forward(y);
    y = torch::adaptive_avg_pool2d(y, {1, 1}).flatten(1);
    return fc(y);
  }
  nn::Conv2d conv;
  nn::BatchNorm2d bn;
  nn::Sequential blocks;
  nn::Linear fc;
};
TORCH_MODULE(ResNet32);

}  // namespace

std::unique_ptr<Task> make_resnet32(std::int64_t batch) {
  return std::make_unique<CifarTask<ResNet32>>(batch);
}

}  // namespace dtr::pt::train
