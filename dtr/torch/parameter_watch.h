#pragma once
/// Which parameters' AccumulateGrad nodes carry DTR's gradient hook (Note
/// [Plain parameter gradients], gradients.cpp). Bookkeeping of autograd
/// nodes only: it knows nothing of cells or the runtime.
#include <torch/csrc/autograd/function_hook.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <unordered_map>

#include "dtr/torch/autograd_node_ptr.h"

namespace dtr::pt {

class ParameterWatch {
 public:
  using MakeHook =
      std::function<std::unique_ptr<torch::autograd::FunctionPreHook>()>;
  explicit ParameterWatch(MakeHook make_hook)
      : make_hook_(std::move(make_hook)) {}

  /// A plain tensor that requires grad was read: hooks its parameter (a
  /// leaf) or the parameters it was computed from (a non-leaf).
  void note(const at::Tensor& t);
  /// A backward pass ended: a new graph comes next, so walks start over.
  void forget_walks() { walked_.clear(); }

 private:
  void watch(const at::Tensor& leaf);
  void walk(const at::Tensor& t);

  MakeHook make_hook_;
  // AccumulateGrad nodes that carry the hook, and nodes walk() visited;
  // keyed by address, checked by identity (weak), swept as they grow.
  std::unordered_map<const void*, WeakNodePtr> watched_;
  std::size_t watched_sweep_at_ = 64;
  std::unordered_map<const void*, WeakNodePtr> walked_;
  std::size_t walked_sweep_at_ = 1024;
};

}  // namespace dtr::pt
