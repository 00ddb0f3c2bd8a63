#pragma once
/// How the kernel calls an operator, for its first run (Context::run_op,
/// kernel.cpp) and for every replay (Replayer::replay, replayer.cpp): the boxed
/// stack built from the call's arguments with each tensor slot replaced by
/// a plain value, then the operator run below autograd. Slots are numbered
/// in for_each_tensor's order, the order the call's records use.
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cstddef>

#include "dtr/torch/ivalue_tensors.h"

namespace dtr::pt {

/// Pushes args[i] for each i: unchanged where keep_as_is(i), else with
/// each tensor t replaced by plain(i, slot, t), slot counting from 0.
template <typename ArgList, typename KeepAsIs, typename Plain>
void push_plain_args(const ArgList& args, KeepAsIs&& keep_as_is, Plain&& plain,
                     torch::jit::Stack* stack) {
  std::size_t slot = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (keep_as_is(i)) {
      stack->push_back(args[i]);
      continue;
    }
    stack->push_back(map_tensors(
        args[i], [&](const at::Tensor& t) { return plain(i, slot++, t); }));
  }
}

/// Runs the operator on the plain values of `stack`, below autograd (the
/// kernel already sits under it) and with grad mode as given: some kernels
/// compute other results by it (Note [Replay under the call's grad mode]).
inline void call_below_autograd(const c10::OperatorHandle& op,
                                torch::jit::Stack* stack, bool grad_mode) {
  at::AutoGradMode grad(grad_mode);
  at::AutoDispatchBelowADInplaceOrView below;
  op.callBoxed(stack);
}

}  // namespace dtr::pt
