#include "dtr/torch/accounting.h"

#include <algorithm>
#include <atomic>

#include "dtr/torch/counting_allocator.h"

namespace dtr::pt {

namespace {
std::atomic<std::uint64_t> g_next_epoch{1};
thread_local AllocationWindow* t_window = nullptr;
thread_local bool t_in_hook = false;
std::atomic<AllocationHook> g_outside_hook{nullptr};

// Clears the thread's window while a hook runs: evicting frees memory and
// may replay nothing, but must not recurse into a hook.
template <typename F>
void run_hook(F&& hook) {
  AllocationWindow* w = t_window;
  t_window = nullptr;
  t_in_hook = true;
  struct Restore {
    AllocationWindow* w;
    ~Restore() {
      t_window = w;
      t_in_hook = false;
    }
  } restore{w};
  hook();
}
}  // namespace

Accounting* accounting_for(c10::DeviceType device) {
  return device == c10::DeviceType::CPU ? &cpu_accounting() : nullptr;
}

AllocationHook set_outside_hook(AllocationHook hook) {
  return g_outside_hook.exchange(hook);
}

std::uint64_t make_room_for(std::int64_t bytes) {
  AllocationWindow* w = t_window;
  if (bytes <= 0) return w != nullptr ? w->epoch_ : 0;
  if (w != nullptr) {
    run_hook([&] { w->before_(w->pending_, bytes); });
    return w->epoch_;
  }
  if (!t_in_hook) {
    if (AllocationHook hook = g_outside_hook.load()) {
      run_hook([&] { hook(0, bytes); });
    }
  }
  return 0;
}

void note_allocated(std::uint64_t window, std::int64_t bytes) {
  AllocationWindow* w = t_window;
  if (w != nullptr && w->epoch_ == window) {
    w->pending_ += bytes;
    w->peak_ = std::max(w->peak_, w->pending_);
  }
}

void note_freed(std::uint64_t window, std::int64_t bytes) {
  AllocationWindow* w = t_window;
  if (w != nullptr && window != 0 && w->epoch_ == window) {
    w->pending_ -= bytes;
  }
}

AllocationWindow::AllocationWindow(Hook before)
    : before_(before), epoch_(g_next_epoch++), previous_(t_window) {
  t_window = this;
}

AllocationWindow::~AllocationWindow() {
  t_window = previous_;
}

}  // namespace dtr::pt
