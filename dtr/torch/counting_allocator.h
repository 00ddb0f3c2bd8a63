#pragma once
/// The CPU allocator dtr installs (c10::SetCPUAllocator): it counts every
/// live byte, keeps the peak, and asks a hook before each allocation so the
/// budget is enforced before memory is taken (evict first, then allocate).
#include <c10/core/Allocator.h>

#include <cstdint>
#include <functional>

namespace dtr::pt {

struct AllocatorCounters {
  std::int64_t bytes = 0;
  std::int64_t peak_bytes = 0;
};

/// Installs the counting allocator once (idempotent). Allocations made
/// before it was installed keep their own deleters and are not counted.
void install_counting_allocator();
AllocatorCounters allocator_counters();
void reset_allocator_peak();

/// Around fork() (Note [Fork]): the first holds the allocator's lock, so
/// the child's counts are whole; the second, in parent and child, lets go.
void lock_allocator_for_fork();
void unlock_allocator_after_fork();

/// Called before an allocation of `bytes`; `pending` is what the open
/// window (if any) has allocated so far and not freed. May evict or throw.
using AllocationHook = void (*)(std::int64_t pending, std::int64_t bytes);

/// A hook for allocations made outside any window (plain tensors: the
/// optimizer, parameters), or nullptr. Not called while a hook runs on
/// this thread. Returns the previous hook.
AllocationHook set_outside_hook(AllocationHook hook);

/// Per-thread allocation window: while one is open on this thread, each
/// allocation of n bytes first calls `before(pending, n)` (which may evict
/// or throw), then adds n to `pending`; frees of memory allocated inside the
/// window subtract again. Windows nest (a replay inside an operator call).
class AllocationWindow {
 public:
  using Hook = AllocationHook;
  explicit AllocationWindow(Hook before);
  ~AllocationWindow();
  AllocationWindow(const AllocationWindow&) = delete;
  AllocationWindow& operator=(const AllocationWindow&) = delete;
  std::int64_t pending_bytes() const { return pending_; }

 private:
  friend class CountingAllocator;
  Hook before_;
  std::int64_t pending_ = 0;
  std::uint64_t epoch_;
  AllocationWindow* previous_;
};

}  // namespace dtr::pt
