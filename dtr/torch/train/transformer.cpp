// Transformer encoder (Vaswani et al. 2017) with dropout 0.1: 4 layers,
// d_model 128, 4 heads, feed-forward 512, sequence 64; classifies the mean
// of the encoded sequence. Dropout masks must replay bit for bit.
#include "dtr/torch/train/models.h"

namespace dtr::pt::train {
namespace {

namespace nn = torch::nn;

class TransformerTask final : public Task {
 public:
  explicit TransformerTask(std::int64_t batch)
      : batch_(batch),
        encoder_(nn::TransformerEncoderOptions(
            nn::TransformerEncoderLayerOptions(kModel, 4)
                .dim_feedforward(512)
                .dropout(0.1),
            4)) {
    net_->register_module("embed", embed_);
    net_->register_module("encoder", encoder_);
    net_->register_module("out", out_);
  }
  nn::Module& module() override { return *net_; }
  std::vector<torch::Tensor> batch(std::int64_t step) override {
    auto gen = data_generator(step);
    return {torch::randn({kSeq, batch_, 32}, gen),
            torch::randint(10, {batch_}, gen)};
  }
  torch::Tensor loss(const std::vector<torch::Tensor>& in) override {
    auto h = encoder_(embed_(in[0]));
    return nn::functional::cross_entropy(out_(h.mean(0)), in[1]);
  }

 private:
  static constexpr std::int64_t kModel = 128, kSeq = 64;
  std::int64_t batch_;
  nn::Sequential net_;
  nn::Linear embed_{32, kModel};
  nn::TransformerEncoder encoder_;
  nn::Linear out_{kModel, 10};
};

}  // namespace

std::unique_ptr<Task> make_transformer(std::int64_t batch) {
  return std::make_unique<TransformerTask>(batch);
}

}  // namespace dtr::pt::train
