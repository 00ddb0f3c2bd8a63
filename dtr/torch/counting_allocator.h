#pragma once
/// The CPU's Accounting (accounting.h): the allocator dtr installs
/// (c10::SetCPUAllocator) counts every live byte, keeps the peak, and makes
/// room (make_room_for) before each allocation, so the budget is enforced
/// before memory is taken (evict first, then allocate).
#include <c10/core/Allocator.h>

#include "dtr/torch/accounting.h"

namespace dtr::pt {

/// The CPU's accounting; installs the counting allocator at its first call.
/// Allocations made before it was installed keep their own deleters and
/// are not counted.
Accounting& cpu_accounting();

}  // namespace dtr::pt
