#pragma once
/// Tensors inside boxed arguments, visited in one fixed traversal order:
/// a Tensor, the elements of a Tensor[] or of a Tensor?[] (other lists are
/// left alone). The kernel numbers these "slots" when it runs an operator
/// and the replay walks them in the same order, so both must use these.
#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>

#include <cstddef>

namespace dtr::pt {

template <typename F>
void for_each_tensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    f(v.toTensor());
  } else if (v.isTensorList()) {
    auto list = v.toTensorList();
    for (std::size_t i = 0; i < list.size(); ++i) f(list.get(i));
  } else if (v.isList()) {
    auto list = v.toList();
    for (std::size_t i = 0; i < list.size(); ++i) {
      c10::IValue e = list.get(i);
      if (e.isTensor()) f(e.toTensor());
    }
  }
}

/// A copy of `v` with every tensor replaced by f(tensor), same order.
template <typename F>
c10::IValue map_tensors(const c10::IValue& v, F&& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    auto list = v.toTensorList();
    c10::List<at::Tensor> out;
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) out.push_back(f(list.get(i)));
    return out;
  }
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      c10::IValue e = list.get(i);
      out.push_back(e.isTensor() ? c10::IValue(f(e.toTensor())) : e);
    }
    return out;
  }
  return v;
}

}  // namespace dtr::pt
