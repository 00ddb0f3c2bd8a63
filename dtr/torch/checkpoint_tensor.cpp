#include "dtr/torch/checkpoint_tensor.h"

#include <algorithm>

#include "dtr/core/error.h"
#include "dtr/torch/checkpoint_context.h"

namespace dtr::pt {

// Records of a context left behind by fork() die without bookkeeping:
// that context is never used again (Note [Fork]).
Cell::~Cell() {
  if (fork_generation == current_fork_generation()) {
    Context::get().on_cell_dead(*this);
  }
}

Remat::~Remat() {
  if (fork_generation == current_fork_generation()) {
    Context::get().on_remat_dead(*this);
  }
}

// Handles come and go on any thread (a tensor dies wherever its last
// reference goes); the counts they keep are read under the context's lock.
Handle::Handle(std::shared_ptr<Cell> c) : cell(std::move(c)) {
  std::lock_guard<std::recursive_mutex> lock(Context::get().mutex());
  ++cell->handles;
  cell->handle_list.push_back(this);
}

Handle::~Handle() {
  reset(nullptr);
}

void Handle::reset(std::shared_ptr<Cell> c) {
  if (fork_generation != current_fork_generation()) {
    cell = std::move(c);  // the parent's context keeps no count for us
    return;
  }
  std::lock_guard<std::recursive_mutex> lock(Context::get().mutex());
  if (c) {
    ++c->handles;
    c->handle_list.push_back(this);
  }
  std::shared_ptr<Cell> old = std::move(cell);
  cell = std::move(c);
  if (!old) return;
  auto& list = old->handle_list;
  list.erase(std::find(list.begin(), list.end(), this));
  if (--old->handles == 0) Context::get().on_last_handle(*old);
}

namespace {
c10::DispatchKeySet wrapper_keys() {
  // The TensorImpl constructor adds AutogradPrivateUse1 and ADInplaceOrView.
  return c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
}
}  // namespace

CheckpointTensorImpl::CheckpointTensorImpl(std::shared_ptr<Handle> handle)
    : c10::TensorImpl(wrapper_keys(), handle->cell->value.dtype(),
                      c10::Device(c10::DeviceType::CPU)),
      handle_(std::move(handle)) {
  refuse_memory_access();
  use_device_autocast();
  refresh_metadata(handle_->cell->value);
}

CheckpointTensorImpl::CheckpointTensorImpl(std::shared_ptr<Handle> handle,
                                           caffe2::TypeMeta dtype)
    : c10::TensorImpl(wrapper_keys(), dtype, c10::Device(c10::DeviceType::CPU)),
      handle_(std::move(handle)) {
  refuse_memory_access();
  use_device_autocast();
}

// A wrapper has no storage: its value may be evicted. Code that reads a
// tensor's memory directly (inductor's compiled code, a C++ extension) must
// be told what to do, not that a tensor "doesn't have storage".
void CheckpointTensorImpl::refuse_memory_access() {
  release_storage_and_set_meta_custom_data_ptr_error_msg_(
      "[dtr] a checkpointed tensor has no memory of its own (DTR may evict "
      "its value): code that reads a tensor's memory directly (a "
      "torch.compile'd function, a C++ extension, data_ptr(), storage()) "
      "needs the plain value: dtr.decheckpoint(t) in Python, "
      "dtr::pt::decheckpoint(t) in C++");
}

// The TensorImpl constructor gives a PrivateUse1 tensor PrivateUse1's
// autocast key; torch.autocast("cpu") enables the CPU's. A wrapper is
// autocast as the values it stands for are, so an op whose inputs are all
// wrappers casts exactly where plain PyTorch does.
void CheckpointTensorImpl::use_device_autocast() {
  using c10::BackendComponent;
  key_set_ = (key_set_ - c10::getAutocastRelatedKeySetFromBackend(
                             BackendComponent::PrivateUse1Bit)) |
             c10::getAutocastRelatedKeySetFromBackend(BackendComponent::CPUBit);
}

void CheckpointTensorImpl::refresh_metadata(const at::Tensor& value) {
  set_sizes_and_strides(value.sizes(), value.strides(), value.storage_offset());
}

c10::intrusive_ptr<c10::TensorImpl>
CheckpointTensorImpl::shallow_copy_and_detach(
    const c10::VariableVersion& version_counter,
    bool allow_tensor_metadata_change) const {
  auto impl = c10::make_intrusive<CheckpointTensorImpl>(handle_, dtype());
  copy_tensor_metadata(this, impl.get(), version_counter,
                       allow_tensor_metadata_change);
  impl->refresh_numel();
  impl->refresh_contiguous();
  return impl;
}

c10::intrusive_ptr<c10::TensorImpl>
CheckpointTensorImpl::shallow_copy_and_detach(
    c10::VariableVersion&& version_counter,
    bool allow_tensor_metadata_change) const {
  auto impl = c10::make_intrusive<CheckpointTensorImpl>(handle_, dtype());
  copy_tensor_metadata(this, impl.get(), std::move(version_counter),
                       allow_tensor_metadata_change);
  impl->refresh_numel();
  impl->refresh_contiguous();
  return impl;
}

void CheckpointTensorImpl::shallow_copy_from(
    const c10::intrusive_ptr<c10::TensorImpl>& impl) {
  auto* other = dynamic_cast<CheckpointTensorImpl*>(impl.get());
  DTR_CHECK(other != nullptr,
            "[dtr] shallow_copy_from: cannot set a checkpointed tensor's "
            "data to a plain tensor");
  copy_tensor_metadata(other, this, version_counter(),
                       allow_tensor_metadata_change());
  refresh_numel();
  refresh_contiguous();
  handle_ = other->handle_;
}

CheckpointTensorImpl* as_checkpoint(const at::Tensor& t) {
  if (!t.defined()) return nullptr;
  return dynamic_cast<CheckpointTensorImpl*>(t.unsafeGetTensorImpl());
}

at::Tensor make_wrapper(std::shared_ptr<Cell> cell) {
  auto handle = std::make_shared<Handle>(std::move(cell));
  return at::Tensor(c10::make_intrusive<CheckpointTensorImpl>(handle));
}

}  // namespace dtr::pt
