#include "dtr/torch/replay_check.h"

#include <cstring>
#include <iostream>

namespace dtr::pt {

// The elements in index order, whatever the strides: padding between
// strided elements is never read, so two equal values compare equal.
std::vector<char> ReplayCheck::elements(const at::Tensor& t) {
  const std::size_t item = t.dtype().itemsize();
  std::vector<char> out(static_cast<std::size_t>(t.numel()) * item);
  if (out.empty()) return out;
  const char* base = static_cast<const char*>(t.data_ptr());
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  std::vector<std::int64_t> index(sizes.size(), 0);
  for (std::size_t n = 0; n < static_cast<std::size_t>(t.numel()); ++n) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < sizes.size(); ++d) at += index[d] * strides[d];
    std::memcpy(out.data() + n * item, base + at * item, item);
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

void ReplayCheck::save(TensorId id, const at::Tensor& value) {
  if (!value.defined() || value.is_sparse() || !value.has_storage()) return;
  Saved s;
  s.bytes = elements(value);
  s.sizes = value.sizes().vec();
  s.strides = value.strides().vec();
  s.offset = value.storage_offset();
  s.dtype = value.dtype();
  saved_[id] = std::move(s);
}

void ReplayCheck::compare(TensorId id, const at::Tensor& value,
                          const std::string& op) {
  auto it = saved_.find(id);
  if (it == saved_.end() || !value.defined()) return;
  if (op.find("::empty") != std::string::npos ||
      op.find("::new_empty") != std::string::npos) {
    saved_.erase(it);  // uninitialized: nothing to compare
    return;
  }
  const Saved& s = it->second;
  std::string what;
  if (value.sizes().vec() != s.sizes || value.dtype() != s.dtype) {
    what = "shape or dtype";
  } else if (elements(value) != s.bytes) {
    what = "values";
  } else if (value.strides().vec() != s.strides) {
    what = "strides (values equal)";
  }
  if (!what.empty()) {
    ++mismatches_;
    std::cerr << "[dtr] DTR_CHECK_REPLAYS: replaying " << op << " gave tensor "
              << id << " different " << what << " (sizes " << value.sizes()
              << ", strides " << value.strides() << " vs "
              << c10::IntArrayRef(s.strides) << ")\n";
  }
  saved_.erase(it);
}

}  // namespace dtr::pt
