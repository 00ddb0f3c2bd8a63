#pragma once
/// How the budget sees a device's memory (docs/cuda.md): an Accounting per
/// device type reports the bytes live and at peak, and its allocator calls
/// make_room_for() before each allocation, which runs the hook of the
/// thread's open AllocationWindow (the kernel's: evict first, then
/// allocate) or the hook for allocations outside any window. The CPU's
/// accounting is the counting allocator (counting_allocator.h); no other
/// device has one yet, and checkpoint() refuses its tensors.
#include <c10/core/DeviceType.h>

#include <cstdint>

namespace dtr::pt {

struct AllocatorCounters {
  std::int64_t bytes = 0;
  std::int64_t peak_bytes = 0;
};

class Accounting {
 public:
  virtual ~Accounting() = default;
  /// Bytes live on the device and their peak since the last reset_peak().
  virtual AllocatorCounters counters() const = 0;
  virtual void reset_peak() = 0;
  /// Around fork() (Note [Fork]): the first holds the accounting's lock,
  /// so the child's counts are whole; the second, in parent and child,
  /// lets go.
  virtual void lock_for_fork() = 0;
  virtual void unlock_after_fork() = 0;
};

/// The accounting of `device`'s memory, installed at its first use, or
/// nullptr for a device dtr does not account.
Accounting* accounting_for(c10::DeviceType device);

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
  /// The most pending_bytes() reached since the window opened.
  std::int64_t peak_bytes() const { return peak_; }

 private:
  friend std::uint64_t make_room_for(std::int64_t bytes);
  friend void note_allocated(std::uint64_t window, std::int64_t bytes);
  friend void note_freed(std::uint64_t window, std::int64_t bytes);
  Hook before_;
  std::int64_t pending_ = 0;
  std::int64_t peak_ = 0;
  std::uint64_t epoch_;
  AllocationWindow* previous_;
};

// For an Accounting's allocator.
/// Runs the open window's hook, or the outside hook, before an allocation
/// of `bytes` on this thread; may throw. Returns the window the allocation
/// belongs to (0: none), for note_allocated and later note_freed.
std::uint64_t make_room_for(std::int64_t bytes);
/// The allocation made room for succeeded.
void note_allocated(std::uint64_t window, std::int64_t bytes);
/// A block allocated in `window` is freed on this thread.
void note_freed(std::uint64_t window, std::int64_t bytes);

}  // namespace dtr::pt
