#include "dtr/torch/counting_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace dtr::pt {

namespace {
struct Block {
  std::int64_t bytes;
  std::uint64_t epoch;  // window that allocated it (0: none)
};

std::mutex g_mutex;
std::unordered_map<void*, Block>& blocks() {
  static auto* m = new std::unordered_map<void*, Block>();  // never freed:
  return *m;  // tensors may die during static destruction
}
AllocatorCounters g_counters;
std::uint64_t g_next_epoch = 1;
thread_local AllocationWindow* t_window = nullptr;
thread_local bool t_in_hook = false;
std::atomic<AllocationHook> g_outside_hook{nullptr};
}  // namespace

AllocationHook set_outside_hook(AllocationHook hook) {
  return g_outside_hook.exchange(hook);
}

class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const auto bytes = static_cast<std::int64_t>(n);
    AllocationWindow* w = t_window;
    if (w != nullptr && bytes > 0) {
      // Clear the window while the hook runs: evicting frees memory and may
      // replay nothing, but must not recurse into the hook.
      t_window = nullptr;
      t_in_hook = true;
      try {
        w->before_(w->pending_, bytes);
      } catch (...) {
        t_window = w;
        t_in_hook = false;
        throw;
      }
      t_window = w;
      t_in_hook = false;
    } else if (bytes > 0 && !t_in_hook) {
      if (AllocationHook hook = g_outside_hook.load()) {
        t_in_hook = true;
        try {
          hook(0, bytes);
        } catch (...) {
          t_in_hook = false;
          throw;
        }
        t_in_hook = false;
      }
    }
    void* p = c10::alloc_cpu(n);
    if (p != nullptr) {
      std::lock_guard<std::mutex> lock(g_mutex);
      blocks()[p] = Block{bytes, w != nullptr ? w->epoch_ : 0};
      g_counters.bytes += bytes;
      g_counters.peak_bytes = std::max(g_counters.peak_bytes, g_counters.bytes);
      if (w != nullptr) w->pending_ += bytes;
    }
    return {p, p, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t n) const override {
    default_copy_data(dest, src, n);
  }

  static void release(void* p) {
    if (p == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      auto it = blocks().find(p);
      if (it != blocks().end()) {
        g_counters.bytes -= it->second.bytes;
        AllocationWindow* w = t_window;
        if (w != nullptr && it->second.epoch == w->epoch_) {
          w->pending_ -= it->second.bytes;
        }
        blocks().erase(it);
      }
    }
    c10::free_cpu(p);
  }
};

void install_counting_allocator() {
  static CountingAllocator* allocator = [] {
    auto* a = new CountingAllocator();
    c10::SetCPUAllocator(a, /*priority=*/100);
    return a;
  }();
  (void)allocator;
}

AllocatorCounters allocator_counters() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_counters;
}

void reset_allocator_peak() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_counters.peak_bytes = g_counters.bytes;
}

void lock_allocator_for_fork() {
  g_mutex.lock();
}

// In the child the one thread left is the one that locked it.
void unlock_allocator_after_fork() {
  g_mutex.unlock();
}

AllocationWindow::AllocationWindow(Hook before)
    : before_(before), previous_(t_window) {
  std::lock_guard<std::mutex> lock(g_mutex);
  epoch_ = g_next_epoch++;
  t_window = this;
}

AllocationWindow::~AllocationWindow() {
  t_window = previous_;
}

}  // namespace dtr::pt
