#pragma once
/// The C++ form of Python's `dtr.checkpoint(module)`: a module whose every
/// forward() call gets its tensor arguments checkpointed first.
///
///   auto model = dtr::pt::checkpoint(torch::nn::Sequential(...));
///   auto loss = torch::nll_loss(model->forward(batch), target);
///
/// LibTorch modules have no forward hooks, so the wrapping happens in this
/// holder's forward() (and operator()); `model->` reaches the module itself
/// (parameters(), train(), ...), and calling forward() through it bypasses
/// DTR for that call. Parameters and their gradients stay plain tensors:
/// the optimizer sees the module unchanged.
// ATen before the module header: clang 14 otherwise meets c10::IValue
// incomplete inside <torch/nn/module.h>.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <concepts>
#include <type_traits>
#include <utility>
#include <vector>

namespace dtr::pt {

void begin_step();  // dtr_torch.h

at::Tensor checkpoint(const at::Tensor& t);
void begin_step();

namespace module_detail {
/// Throws dtr::InvalidArgument unless every parameter is a dense CPU tensor.
void check_parameters(const torch::nn::Module& module);

/// A forward() argument with its dense CPU tensors checkpointed, as Python's
/// wrap() does; anything else passes through untouched.
inline at::Tensor checkpoint_argument(const at::Tensor& t) {
  if (t.defined() && t.device().is_cpu() && t.layout() == at::kStrided) {
    return checkpoint(t);
  }
  return t;
}
inline std::vector<at::Tensor> checkpoint_argument(
    const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(checkpoint_argument(t));
  return out;
}
// Not for a std::vector<at::Tensor> lvalue either: this template would bind
// it more closely than the overload above and pass the list through.
template <typename T>
requires(!std::convertible_to<const T&, const at::Tensor&> &&
         !std::same_as<std::remove_cvref_t<T>,
                       std::vector<at::Tensor>>) decltype(auto)
    checkpoint_argument(T&& value) {
  return std::forward<T>(value);
}
}  // namespace module_detail

/// Holds a LibTorch module (a ModuleHolder such as torch::nn::Sequential or
/// torch::nn::Linear, or a TORCH_MODULE of your own).
template <typename Holder>
class CheckpointedModule {
 public:
  explicit CheckpointedModule(Holder module) : module_(std::move(module)) {
    module_detail::check_parameters(*module_);
  }

  template <typename... Args>
  decltype(auto) forward(Args&&... args) {
    begin_step();  // Note [Step boundaries]: the root's forward starts one
    return module_->forward(
        module_detail::checkpoint_argument(std::forward<Args>(args))...);
  }
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    return forward(std::forward<Args>(args)...);
  }

  auto* operator->() { return module_.get(); }
  const auto* operator->() const { return module_.get(); }
  Holder& module() { return module_; }

 private:
  Holder module_;
};

/// Wraps `module` (see the top of this file). The module is shared, not
/// copied: a ModuleHolder is a shared pointer.
template <typename Holder>
requires std::derived_from<typename Holder::ContainedType, torch::nn::Module>
    CheckpointedModule<Holder> checkpoint(Holder module) {
  return CheckpointedModule<Holder>(std::move(module));
}

}  // namespace dtr::pt
