// An ordinary LibTorch training loop run under a DTR memory budget with the
// public API (dtr/torch/dtr_torch.h): checkpoint the inputs, open a Budget,
// train. Losses are bitwise those of the same loop without DTR.
//
//   build/examples/train_mlp [steps]
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>

#include "dtr/torch/dtr_torch.h"

namespace {

torch::nn::Sequential make_mlp() {
  torch::manual_seed(0);
  torch::nn::Sequential net;
  net->push_back(torch::nn::Linear(256, 512));
  for (int i = 0; i < 6; ++i) {
    net->push_back(torch::nn::ReLU());
    net->push_back(torch::nn::Linear(512, 512));
  }
  net->push_back(torch::nn::ReLU());
  net->push_back(torch::nn::Linear(512, 10));
  return net;
}

// Trains `steps` SGD steps; with `budget_bytes` > 0, under DTR.
std::vector<double> train(int steps, std::int64_t budget_bytes) {
  torch::nn::Sequential net = make_mlp();
  torch::optim::SGD opt(net->parameters(), /*lr=*/0.01);
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    torch::manual_seed(100 + step);
    torch::Tensor x = torch::randn({256, 256});
    torch::Tensor y = torch::randint(10, {256});
    opt.zero_grad();
    torch::Tensor loss;
    if (budget_bytes > 0) {
      dtr::pt::Budget guard(budget_bytes);
      loss = torch::cross_entropy_loss(net->forward(dtr::pt::checkpoint(x)),
                                       dtr::pt::checkpoint(y));
      loss.backward();
      loss = dtr::pt::decheckpoint(loss);
    } else {
      loss = torch::cross_entropy_loss(net->forward(x), y);
      loss.backward();
    }
    opt.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 3;
  std::vector<double> plain = train(steps, 0);

  // Find the unbudgeted DTR peak, then train with half of it.
  dtr::pt::reset_peak();
  train(1, dtr::pt::kUnlimited);
  const std::int64_t peak = dtr::pt::stats().dtr_peak_bytes;
  dtr::pt::reset_peak();
  std::vector<double> dtr_losses = train(steps, peak / 2);
  dtr::pt::Stats s = dtr::pt::stats();

  std::printf(
      "budget %lld bytes (half of %lld): peak %lld, %llu "
      "evictions, %llu recomputations\n",
      static_cast<long long>(peak / 2), static_cast<long long>(peak),
      static_cast<long long>(s.dtr_peak_bytes),
      static_cast<unsigned long long>(s.evictions),
      static_cast<unsigned long long>(s.remat_ops));
  for (int i = 0; i < steps; ++i) {
    std::printf("step %d: loss %.6f (plain %.6f)\n", i, dtr_losses[i],
                plain[i]);
    if (dtr_losses[i] != plain[i]) {
      std::fprintf(stderr, "train_mlp: losses differ at step %d\n", i);
      return 1;
    }
  }
  return 0;
}
