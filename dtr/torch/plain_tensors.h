#pragma once
/// Small facts about plain (non-checkpointed) tensors the kernel needs in
/// several places.
#include <ATen/ATen.h>

#include <cstdint>

namespace dtr::pt {

/// The buffer behind `t`, or nullptr for a tensor without storage.
inline const c10::StorageImpl* storage_of(const at::Tensor& t) {
  return t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
}

/// A copy of `v` with the same strides when they are dense (so kernels see
/// the same layout), else contiguous: what a copy-on-write writes into.
inline at::Tensor cow_clone(const at::Tensor& v) {
  if (v.is_non_overlapping_and_dense()) {
    return at::empty_strided(v.sizes(), v.strides(), v.options()).copy_(v);
  }
  return v.clone(at::MemoryFormat::Contiguous);
}

/// The version counter of `t` (0 for inference tensors, which have none).
inline std::uint32_t version_of(const at::Tensor& t) {
  return t.is_inference() ? 0 : t._version();
}

}  // namespace dtr::pt
