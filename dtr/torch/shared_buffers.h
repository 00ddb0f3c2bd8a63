#pragma once
/// The buffers that the program and DTR share, both ways: storages of
/// values the program reaches without DTR (Note [Program-visible
/// buffers]), buffers it gave to checkpoint(), and plain buffers that a
/// live lineage reads (a write into one cuts the lineage). Counts only:
/// the Context says when a value becomes visible or a Remat dies.
#include <c10/core/StorageImpl.h>

#include <optional>
#include <unordered_map>

#include "dtr/core/graph.h"

namespace dtr::pt {

class SharedBuffers {
 public:
  /// A value in storage `s` became program-visible; `input` is the
  /// buffer the program gave to checkpoint() for it, or nullptr.
  void add_visible(StorageId s, const c10::StorageImpl* input);
  /// A visible value in `s` died; `buffer` is the buffer it was visible
  /// in. The last one makes `s` invisible and forgets the buffer.
  void remove_visible(StorageId s, const c10::StorageImpl* buffer);
  bool visible(StorageId s) const { return visible_.count(s) != 0; }
  /// The storage a buffer given to checkpoint() lives in, if still live.
  std::optional<StorageId> storage_of_input(
      const c10::StorageImpl* buffer) const;

  /// A rematerializer captured (reads) this plain buffer, or dropped it.
  void capture(const c10::StorageImpl* buffer) { ++captured_[buffer]; }
  void release_capture(const c10::StorageImpl* buffer);
  bool captured(const c10::StorageImpl* buffer) const {
    return captured_.count(buffer) != 0;
  }

 private:
  std::unordered_map<StorageId, int> visible_;  // live visible values
  std::unordered_map<const c10::StorageImpl*, StorageId> inputs_;
  std::unordered_map<const c10::StorageImpl*, int> captured_;
};

}  // namespace dtr::pt
