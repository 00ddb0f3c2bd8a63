#include "dtr/torch/train/bitwise.h"

#include <bit>
#include <cstdint>
#include <cstring>

#include "dtr/core/error.h"

namespace dtr::pt::train {

bool bitwise_equal(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) {
    return false;
  }
  DTR_CHECK(a.device().is_cpu() && b.device().is_cpu(),
            "[train] bitwise_equal: CPU tensors only, got ", a.device(),
            " and ", b.device());
  // Contiguous copies hold the elements in the same order whatever the
  // strides were, with no padding between them.
  const at::Tensor x = a.contiguous();
  const at::Tensor y = b.contiguous();
  const std::size_t n = x.nbytes();
  return n == 0 || std::memcmp(x.const_data_ptr(), y.const_data_ptr(), n) == 0;
}

bool bitwise_equal(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

}  // namespace dtr::pt::train
