#include "dtr/torch/shared_buffers.h"

namespace dtr::pt {

void SharedBuffers::add_visible(StorageId s, const c10::StorageImpl* input) {
  ++visible_[s];
  if (input != nullptr) inputs_.emplace(input, s);
}

void SharedBuffers::remove_visible(StorageId s,
                                   const c10::StorageImpl* buffer) {
  auto it = visible_.find(s);
  if (it == visible_.end() || --it->second > 0) return;
  visible_.erase(it);
  auto b = inputs_.find(buffer);
  if (b != inputs_.end() && b->second == s) inputs_.erase(b);
}

std::optional<StorageId> SharedBuffers::storage_of_input(
    const c10::StorageImpl* buffer) const {
  auto it = inputs_.find(buffer);
  if (it == inputs_.end()) return std::nullopt;
  return it->second;
}

void SharedBuffers::release_capture(const c10::StorageImpl* buffer) {
  auto it = captured_.find(buffer);
  if (it != captured_.end() && --it->second == 0) captured_.erase(it);
}

}  // namespace dtr::pt
