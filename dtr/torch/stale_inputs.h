#pragma once
/// The check a replay makes before it runs: every plain input it captured
/// still holds what it held at capture (Note [Stale plain inputs]).
#include <ATen/core/ivalue.h>

#include "dtr/torch/checkpoint_tensor.h"

namespace dtr::pt {

/// Throws dtr::Error naming the operator, the input and what changed if a
/// plain input of `remat` (or a checkpoint()ed input's buffer) was given
/// another buffer, written in place, or holds other bytes since capture.
/// `args` are the replay's arguments, in the order of `remat.args`.
void check_plain_inputs(const Remat& remat, const c10::IValue* args);

}  // namespace dtr::pt
