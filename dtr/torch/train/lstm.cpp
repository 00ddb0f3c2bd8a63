// LSTM language-model-like task: embedding-free inputs (batch x seq x 32),
// one LSTMCell (hidden 128) unrolled over `kSeq` steps, classifying every
// step. Sequence length is a parameter (`dtr train --seq-len`, default
// kDefaultLstmSeqLen). At the
// default batch (256) a time step's activations (~1 MiB) dwarf the per-step
// weight gradients (W_hh: 256 KiB), as in the training runs DTR is for.
#include "dtr/torch/train/models.h"

namespace dtr::pt::train {
namespace {

namespace nn = torch::nn;

class LstmTask final : public Task {
 public:
  LstmTask(std::int64_t batch, std::int64_t seq_len)
      : batch_(batch), seq_(seq_len) {
    net_->register_module("cell", cell_);
    net_->register_module("out", out_);
  }
  nn::Module& module() override { return *net_; }
  std::vector<torch::Tensor> batch(std::int64_t step) override {
    auto gen = data_generator(step);
    return {torch::randn({seq_, batch_, kIn}, gen),
            torch::randint(kClasses, {seq_, batch_}, gen)};
  }
  torch::Tensor loss(const std::vector<torch::Tensor>& in) override {
    // new_zeros, not torch::zeros: the initial state must be a tensor of
    // the input's kind. A plain zeros state would be mutated in place by
    // lstm_cell (`linear_hh(hx).add_(linear_ih(x))`), so every gate and
    // state would stay a plain tensor outside DTR (see docs/torch.md).
    auto h = in[0].new_zeros({batch_, kHidden});
    auto c = in[0].new_zeros({batch_, kHidden});
    torch::Tensor total;
    for (std::int64_t t = 0; t < seq_; ++t) {
      std::tie(h, c) = cell_(in[0][t], std::make_tuple(h, c));
      auto l = nn::functional::cross_entropy(out_(h), in[1][t]);
      total = t == 0 ? l : total + l;
    }
    return total / static_cast<double>(seq_);
  }

 private:
  static constexpr std::int64_t kIn = 32, kHidden = 128, kClasses = 32;
  std::int64_t batch_, seq_;
  nn::Sequential net_;
  nn::LSTMCell cell_{kIn, kHidden};
  nn::Linear out_{kHidden, kClasses};
};

}  // namespace

std::unique_ptr<Task> make_lstm(std::int64_t batch, std::int64_t seq_len) {
  return std::make_unique<LstmTask>(batch, seq_len);
}

}  // namespace dtr::pt::train
