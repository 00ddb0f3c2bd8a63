#pragma once
/// DTR_CHECK_REPLAYS=1: every value the runtime frees is copied aside
/// (outside the budget: plain heap memory), and every replay's outputs are
/// compared with the copies, bit for bit; a difference is reported on
/// stderr with the operator's name. For diagnosing a run whose results
/// differ from plain PyTorch; it keeps a copy of every freed value (until
/// it is replayed) and slows every eviction. Outputs of the empty family
/// are skipped (uninitialized by definition). A value the program later
/// overwrote in place, when its old contents were dead (no copy-on-write),
/// is freed with the new contents, so its replay reports "different
/// values" without being wrong; a strides difference is always real (a
/// replay that gave a strided gradient buffer contiguous strides shows up
/// here).
#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "dtr/core/graph.h"

namespace dtr::pt {

class ReplayCheck {
 public:
  /// Copies `value` (the value of tensor `id`, about to be freed).
  void save(TensorId id, const at::Tensor& value);
  /// Compares a replayed value with the copy of tensor `id`, if any, and
  /// drops the copy; reports a difference naming `op`.
  void compare(TensorId id, const at::Tensor& value, const std::string& op);
  std::uint64_t mismatches() const { return mismatches_; }

 private:
  struct Saved {
    std::vector<char> bytes;  // the elements, in index order
    std::vector<std::int64_t> sizes, strides;
    std::int64_t offset = 0;
    caffe2::TypeMeta dtype;
  };
  static std::vector<char> elements(const at::Tensor& t);
  std::unordered_map<TensorId, Saved> saved_;
  std::uint64_t mismatches_ = 0;
};

}  // namespace dtr::pt
