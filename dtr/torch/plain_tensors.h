#pragma once
/// Small facts about plain (non-checkpointed) tensors the kernel needs in
/// several places.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace dtr::pt {

/// The buffer behind `t`, or nullptr for a tensor without storage.
inline const c10::StorageImpl* storage_of(const at::Tensor& t) {
  return t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
}

/// Whether no two elements of `v` share memory, gaps between them allowed
/// (ATen's has_internal_overlap answers "too hard" for any gap).
inline bool elements_are_distinct(const at::Tensor& v) {
  // Dims by increasing stride: each stride must pass the furthest element
  // the smaller ones reach.
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // stride, size
  for (std::int64_t d = 0; d < v.dim(); ++d) {
    if (v.size(d) == 0) return true;
    if (v.size(d) > 1) dims.emplace_back(v.stride(d), v.size(d));
  }
  std::sort(dims.begin(), dims.end());
  std::int64_t reach = 0;  // furthest offset reached by the smaller dims
  for (const auto& [stride, size] : dims) {
    if (stride <= reach) return false;
    reach += stride * (size - 1);
  }
  return true;
}

/// A copy of `v` with the same strides whenever its elements are distinct,
/// gaps included (a [16, 24] view of a [16, 25] buffer stays [25, 1]):
/// kernels that read it must see the layout the program gave them, or a
/// kernel may add in another order and round differently (nn.GRU's
/// backward under Adam did, silently). Else contiguous (PyTorch refuses an
/// in-place write to an overlapping tensor anyway). What a copy-on-write
/// writes into.
inline at::Tensor cow_clone(const at::Tensor& v) {
  if (elements_are_distinct(v)) {
    return at::empty_strided(v.sizes(), v.strides(), v.options()).copy_(v);
  }
  return v.clone(at::MemoryFormat::Contiguous);
}

/// The version counter of `t` (0 for inference tensors, which have none).
inline std::uint32_t version_of(const at::Tensor& t) {
  return t.is_inference() ? 0 : t._version();
}

}  // namespace dtr::pt
