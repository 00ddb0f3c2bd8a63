#pragma once
// Owning and weak pointers to autograd nodes, whichever kind the PyTorch at
// hand uses: std::shared_ptr up to 2.12, c10::intrusive_ptr from 2.13. Read
// off the type of Edge::function so that no version number is compared.

#include <torch/csrc/autograd/edge.h>
#include <torch/csrc/autograd/function.h>

#include <memory>
#include <type_traits>
#include <utility>

namespace dtr::pt {

using NodePtr =
    std::remove_cv_t<decltype(std::declval<torch::autograd::Edge>().function)>;

namespace node_ptr {
template <typename P>
struct WeakOf;
template <typename T>
struct WeakOf<std::shared_ptr<T>> {
  using type = std::weak_ptr<T>;
};
template <typename T>
struct WeakOf<c10::intrusive_ptr<T>> {
  using type = c10::weak_intrusive_ptr<T>;
};
}  // namespace node_ptr

using WeakNodePtr = typename node_ptr::WeakOf<NodePtr>::type;

}  // namespace dtr::pt
