#pragma once
/// The handlers of the operators the kernel does not record as one call of
/// themselves: the rows of kSpecialOps (op_rules.cpp) that name a Route.
/// Most are made of other calls (a view, a split and its clones, rrelu's
/// functional form and a copy), which they make through the kernel again.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <functional>

#include "dtr/core/runtime.h"
#include "dtr/torch/kernel_parts.h"
#include "dtr/torch/op_rules.h"
#include "dtr/torch/release_queue.h"

namespace dtr::pt {

class SpecialOps {
 public:
  /// The boxed kernel, for the calls a handler is made of.
  using Kernel =
      std::function<void(const c10::OperatorHandle&, torch::jit::Stack*)>;
  SpecialOps(Kernel kernel, Runtime& runtime, ReleaseQueue& releases)
      : kernel_(std::move(kernel)), runtime_(runtime), releases_(releases) {}

  /// Runs `op` on `args` and pushes its results if its rules route it to a
  /// handler and its arguments call for one; false: the general path.
  bool route(const c10::OperatorHandle& op, const OpRules& rules,
             torch::jit::Stack* stack, Args& args);

 private:
  void in_place_view(const c10::OperatorHandle& view, torch::jit::Stack* stack,
                     Args& args);
  void unsafe_split(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                    Args& args);
  void rrelu_with_noise(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                        Args& args);
  void plain(const c10::OperatorHandle& op, torch::jit::Stack* stack,
             Args args);

  Kernel kernel_;
  Runtime& runtime_;
  ReleaseQueue& releases_;
  bool in_unsafe_split_ = false;  // Note [unsafe_split]
};

}  // namespace dtr::pt
