#pragma once
/// Bitwise equality for `dtr train --check`: a NaN equals the same NaN,
/// +0.0 differs from -0.0, and tensors must agree in dtype and shape too.
/// Value equality (==, torch::equal) says neither: a run gone NaN would
/// differ from itself, and a sign flip of zero would pass.
///
///   bitwise_equal(torch::full({2}, NAN), torch::full({2}, NAN));  // true
///   bitwise_equal(torch::zeros({1}), -torch::zeros({1}));          // false
#include <ATen/ATen.h>

namespace dtr::pt::train {

/// True when both are undefined, or both have the same dtype and sizes and
/// every element the same bytes (strides may differ). CPU tensors; O(n).
bool bitwise_equal(const at::Tensor& a, const at::Tensor& b);

/// True when `a` and `b` have the same bit pattern.
bool bitwise_equal(double a, double b);

}  // namespace dtr::pt::train
