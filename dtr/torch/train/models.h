#pragma once
/// Training tasks for `dtr train`: ordinary torch::nn models with random
/// data, written as a LibTorch user would (nothing DTR-specific inside).
///
///   auto task = dtr::pt::train::make_task("resnet", /*batch=*/8);
///   auto inputs = task->batch(/*step=*/0);
///   task->loss(inputs).backward();
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtr::pt::train {

class Task {
 public:
  virtual ~Task() = default;
  virtual torch::nn::Module& module() = 0;
  /// Inputs and targets for `step`, generated deterministically from it
  /// (never from the global generator, which dropout uses).
  virtual std::vector<torch::Tensor> batch(std::int64_t step) = 0;
  /// Training loss; `inputs` is batch()'s result, possibly checkpointed.
  virtual torch::Tensor loss(const std::vector<torch::Tensor>& inputs) = 0;
};

/// Creates a task with fresh parameters drawn from the global generator.
/// `name` is one of model_names() or "resnet32" (an alias of "resnet");
/// `seq_len` is the recurrent models' number of time steps (lstm; unset:
/// its default). Throws dtr::InvalidArgument naming an unknown model, a
/// batch or length that is not positive, or a length given to a model
/// without one.
std::unique_ptr<Task> make_task(
    const std::string& name, std::int64_t batch,
    std::optional<std::int64_t> seq_len = std::nullopt);
/// mlp, resnet (ResNet-32), densenet, unet, lstm, treelstm, transformer:
/// the simulator's names (dtr/models) where it has the same model.
const std::vector<std::string>& model_names();
/// Default batch size: activations dominate memory, one step ~1 s.
std::int64_t default_batch(const std::string& name);

// One factory per model file.
std::unique_ptr<Task> make_mlp(std::int64_t batch);
std::unique_ptr<Task> make_resnet32(std::int64_t batch);
std::unique_ptr<Task> make_densenet(std::int64_t batch);
std::unique_ptr<Task> make_unet(std::int64_t batch);
inline constexpr std::int64_t kDefaultLstmSeqLen = 32;
std::unique_ptr<Task> make_lstm(std::int64_t batch, std::int64_t seq_len);
std::unique_ptr<Task> make_treelstm(std::int64_t batch);
std::unique_ptr<Task> make_transformer(std::int64_t batch);

/// A generator seeded from (model, step): data independent of the global one.
torch::Generator data_generator(std::int64_t step);

/// A CIFAR-style classification task on `Net` (a torch::nn module holder):
/// random 3x32x32 images, 10 classes, cross-entropy loss.
template <typename Net>
class CifarTask : public Task {
 public:
  explicit CifarTask(std::int64_t batch) : batch_(batch) {}
  torch::nn::Module& module() override { return *net_; }
  std::vector<torch::Tensor> batch(std::int64_t step) override {
    auto gen = data_generator(step);
    return {torch::randn({batch_, 3, 32, 32}, gen),
            torch::randint(10, {batch_}, gen)};
  }
  torch::Tensor loss(const std::vector<torch::Tensor>& in) override {
    return torch::nn::functional::cross_entropy(net_->forward(in[0]), in[1]);
  }

 protected:
  std::int64_t batch_;
  Net net_;
};

}  // namespace dtr::pt::train
