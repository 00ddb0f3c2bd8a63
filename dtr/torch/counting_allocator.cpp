#include "dtr/torch/counting_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace dtr::pt {

namespace {

struct Block {
  std::int64_t bytes;
  std::uint64_t window;  // the window that allocated it (0: none)
};

std::mutex g_mutex;
std::unordered_map<void*, Block>& blocks() {
  static auto* m = new std::unordered_map<void*, Block>();  // never freed:
  return *m;  // tensors may die during static destruction
}
AllocatorCounters g_counters;

class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const auto bytes = static_cast<std::int64_t>(n);
    const std::uint64_t window = make_room_for(bytes);  // may throw
    void* p = c10::alloc_cpu(n);
    if (p != nullptr) {
      {
        std::lock_guard<std::mutex> lock(g_mutex);
        blocks()[p] = Block{bytes, window};
        g_counters.bytes += bytes;
        g_counters.peak_bytes =
            std::max(g_counters.peak_bytes, g_counters.bytes);
      }
      note_allocated(window, bytes);
    }
    return {p, p, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t n) const override {
    default_copy_data(dest, src, n);
  }

  static void release(void* p) {
    if (p == nullptr) return;
    std::optional<Block> freed;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      auto it = blocks().find(p);
      if (it != blocks().end()) {
        g_counters.bytes -= it->second.bytes;
        freed = it->second;
        blocks().erase(it);
      }
    }
    if (freed) note_freed(freed->window, freed->bytes);
    c10::free_cpu(p);
  }
};

class CpuAccounting final : public Accounting {
 public:
  CpuAccounting() { c10::SetCPUAllocator(&allocator_, /*priority=*/100); }
  AllocatorCounters counters() const override {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_counters;
  }
  void reset_peak() override {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_counters.peak_bytes = g_counters.bytes;
  }
  void lock_for_fork() override { g_mutex.lock(); }
  // In the child the one thread left is the one that locked it.
  void unlock_after_fork() override { g_mutex.unlock(); }

 private:
  CountingAllocator allocator_;
};

}  // namespace

Accounting& cpu_accounting() {
  static auto* accounting = new CpuAccounting();  // never destroyed
  return *accounting;
}

}  // namespace dtr::pt
