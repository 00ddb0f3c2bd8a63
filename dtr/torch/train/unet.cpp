// A small U-Net (Ronneberger et al. 2015): 3 levels (16/32/64 channels),
// double 3x3 convs with batch norm, max-pool down, transposed-conv up, skip
// concatenations; per-pixel 2-class segmentation of 64x64 inputs.
#include "dtr/torch/train/models.h"

namespace dtr::pt::train {
namespace {

namespace nn = torch::nn;

nn::Sequential double_conv(std::int64_t in, std::int64_t out) {
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(false)),
      nn::BatchNorm2d(out), nn::Functional(torch::relu),
      nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1).bias(false)),
      nn::BatchNorm2d(out), nn::Functional(torch::relu));
}

struct UNetImpl : nn::Module {
  UNetImpl() {
    down1 = register_module("down1", double_conv(3, 16));
    down2 = register_module("down2", double_conv(16, 32));
    bottom = register_module("bottom", double_conv(32, 64));
    up2 = register_module(
        "up2",
        nn::ConvTranspose2d(nn::ConvTranspose2dOptions(64, 32, 2).stride(2)));
    dec2 = register_module("dec2", double_conv(64, 32));
    up1 = register_module(
        "up1",
        nn::ConvTranspose2d(nn::ConvTranspose2dOptions(32, 16, 2).stride(2)));
    dec1 = register_module("dec1", double_conv(32, 16));
    head = register_module("head", nn::Conv2d(nn::Conv2dOptions(16, 2, 1)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto d1 = down1->forward(x);
    auto d2 = down2->forward(torch::max_pool2d(d1, 2));
    auto b = bottom->forward(torch::max_pool2d(d2, 2));
    auto u2 = dec2->forward(torch::cat({up2(b), d2}, 1));
    auto u1 = dec1->forward(torch::cat({up1(u2), d1}, 1));
    return head(u1);
  }
  nn::Sequential down1{nullptr}, down2{nullptr}, bottom{nullptr};
  nn::Sequential dec2{nullptr}, dec1{nullptr};
  nn::ConvTranspose2d up2{nullptr}, up1{nullptr};
  nn::Conv2d head{nullptr};
};
TORCH_MODULE(UNet);

class UNetTask final : public Task {
 public:
  explicit UNetTask(std::int64_t batch) : batch_(batch) {}
  nn::Module& module() override { return *net_; }
  std::vector<torch::Tensor> batch(std::int64_t step) override {
    auto gen = data_generator(step);
    return {torch::randn({batch_, 3, 64, 64}, gen),
            torch::randint(2, {batch_, 64, 64}, gen)};
  }
  torch::Tensor loss(const std::vector<torch::Tensor>& in) override {
    return nn::functional::cross_entropy(net_->forward(in[0]), in[1]);
  }

 private:
  std::int64_t batch_;
  UNet net_;
};

}  // namespace

std::unique_ptr<Task> make_unet(std::int64_t batch) {
  return std::make_unique<UNetTask>(batch);
}

}  // namespace dtr::pt::train
