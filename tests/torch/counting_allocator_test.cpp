// Tests of the counting CPU allocator (dtr/torch/counting_allocator.h):
// live bytes and the peak, frees of memory it did not allocate, the
// per-thread allocation windows and their hooks, and exact counts under
// allocations from several threads at once.
#include "dtr/torch/counting_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <latch>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace pt = dtr::pt;

c10::Allocator* counting_allocator() {
  pt::cpu_accounting();
  return c10::GetCPUAllocator();
}

std::int64_t live_bytes() {
  return pt::cpu_accounting().counters().bytes;
}

// The hook for allocations outside any window, set for one scope and the
// previous one (dtr's own, installed when the library loaded) restored.
class ScopedOutsideHook {
 public:
  explicit ScopedOutsideHook(pt::AllocationHook hook)
      : previous_(pt::set_outside_hook(hook)) {}
  ~ScopedOutsideHook() { pt::set_outside_hook(previous_); }
  ScopedOutsideHook(const ScopedOutsideHook&) = delete;
  ScopedOutsideHook& operator=(const ScopedOutsideHook&) = delete;

 private:
  pt::AllocationHook previous_;
};

// What the hooks below saw, per thread: (pending, bytes) of each call.
thread_local std::vector<std::pair<std::int64_t, std::int64_t>> t_calls;
void recording_hook(std::int64_t pending, std::int64_t bytes) {
  t_calls.emplace_back(pending, bytes);
}
thread_local std::size_t t_call_count = 0;
void counting_hook(std::int64_t, std::int64_t) {
  ++t_call_count;
}
void throwing_hook(std::int64_t, std::int64_t) {
  throw std::runtime_error("no room");
}
// Allocates itself, as an eviction's bookkeeping may: must not recurse.
void allocating_hook(std::int64_t pending, std::int64_t bytes) {
  t_calls.emplace_back(pending, bytes);
  c10::DataPtr scratch = c10::GetCPUAllocator()->allocate(8);
}

class CountingAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override { t_calls.clear(); }
};

TEST_F(CountingAllocatorTest, CountsLiveBytesOfTheCpuAllocator) {
  c10::Allocator* a = counting_allocator();
  const std::int64_t before = live_bytes();
  {
    c10::DataPtr p = a->allocate(1000);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_EQ(live_bytes(), before + 1000);
    c10::DataPtr q = a->allocate(24);
    EXPECT_EQ(live_bytes(), before + 1024);
  }
  EXPECT_EQ(live_bytes(), before);
  // Plain tensors take their memory from it too: 250 floats.
  {
    torch::Tensor t = torch::empty({250}, torch::kFloat);
    EXPECT_EQ(live_bytes(), before + 1000);
  }
  EXPECT_EQ(live_bytes(), before);
}

TEST_F(CountingAllocatorTest, InstallingTwiceKeepsOneAllocator) {
  c10::Allocator* first = counting_allocator();
  pt::cpu_accounting();
  EXPECT_EQ(c10::GetCPUAllocator(), first);
  const std::int64_t before = live_bytes();
  {
    c10::DataPtr p = first->allocate(64);
    EXPECT_EQ(live_bytes(), before + 64);
  }
  EXPECT_EQ(live_bytes(), before);
}

TEST_F(CountingAllocatorTest, PeakIsTheHighestLiveCountSinceItsReset) {
  c10::Allocator* a = counting_allocator();
  pt::cpu_accounting().reset_peak();
  const std::int64_t base = live_bytes();
  EXPECT_EQ(pt::cpu_accounting().counters().peak_bytes, base);
  c10::DataPtr small = a->allocate(300);
  {
    c10::DataPtr big = a->allocate(500);  // live: base + 800
  }
  c10::DataPtr other = a->allocate(100);  // live: base + 400
  pt::AllocatorCounters c = pt::cpu_accounting().counters();
  EXPECT_EQ(c.bytes, base + 400);
  EXPECT_EQ(c.peak_bytes, base + 800);
  small.clear();
  other.clear();
  EXPECT_EQ(pt::cpu_accounting().counters().peak_bytes, base + 800);
  pt::cpu_accounting().reset_peak();
  c = pt::cpu_accounting().counters();
  EXPECT_EQ(c.bytes, base);
  EXPECT_EQ(c.peak_bytes, base);
}

TEST_F(CountingAllocatorTest, FreeingMemoryItDidNotAllocateCountsNothing) {
  // Allocations made before it was installed reach its deleter too.
  c10::Allocator* a = counting_allocator();
  const pt::AllocatorCounters before = pt::cpu_accounting().counters();
  void* foreign = c10::alloc_cpu(4096);
  ASSERT_NE(foreign, nullptr);
  EXPECT_EQ(live_bytes(), before.bytes);
  a->raw_deleter()(foreign);  // freed, not subtracted
  EXPECT_EQ(live_bytes(), before.bytes);
  EXPECT_EQ(pt::cpu_accounting().counters().peak_bytes, before.peak_bytes);
  a->raw_deleter()(nullptr);  // a no-op
  EXPECT_EQ(live_bytes(), before.bytes);
}

TEST_F(CountingAllocatorTest, WindowHookRunsBeforeEachAllocation) {
  c10::Allocator* a = counting_allocator();
  c10::DataPtr outside = a->allocate(7);  // before the window: not pending
  pt::AllocationWindow window(&recording_hook);
  c10::DataPtr x = a->allocate(100);
  c10::DataPtr y = a->allocate(50);
  c10::DataPtr empty = a->allocate(0);  // no bytes, no hook
  EXPECT_EQ(t_calls, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                         {0, 100}, {100, 50}}));
  EXPECT_EQ(window.pending_bytes(), 150);
  x.clear();
  EXPECT_EQ(window.pending_bytes(), 50);
  outside.clear();  // allocated outside the window
  EXPECT_EQ(window.pending_bytes(), 50);
}

// The peak is what Note [Workspace] records as an operator's scratch.
TEST_F(CountingAllocatorTest, AWindowKeepsThePeakOfItsPendingBytes) {
  c10::Allocator* a = counting_allocator();
  pt::AllocationWindow window(&recording_hook);
  c10::DataPtr out = a->allocate(100);
  {
    c10::DataPtr scratch = a->allocate(300);
    EXPECT_EQ(window.peak_bytes(), 400);
  }
  c10::DataPtr more = a->allocate(50);
  EXPECT_EQ(window.pending_bytes(), 150);
  EXPECT_EQ(window.peak_bytes(), 400);
  {
    pt::AllocationWindow inner(&recording_hook);  // a replay's own window
    c10::DataPtr big = a->allocate(1000);
    EXPECT_EQ(inner.peak_bytes(), 1000);
  }
  EXPECT_EQ(window.peak_bytes(), 400);
}

TEST_F(CountingAllocatorTest, NestedWindowsKeepTheirOwnPendingBytes) {
  c10::Allocator* a = counting_allocator();
  pt::AllocationWindow outer(&recording_hook);
  c10::DataPtr x = a->allocate(100);
  {
    pt::AllocationWindow inner(&recording_hook);
    c10::DataPtr y = a->allocate(40);
    EXPECT_EQ(inner.pending_bytes(), 40);
    EXPECT_EQ(outer.pending_bytes(), 100);
  }
  c10::DataPtr z = a->allocate(10);  // the outer window again
  EXPECT_EQ(t_calls, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                         {0, 100}, {0, 40}, {100, 10}}));
  EXPECT_EQ(outer.pending_bytes(), 110);
}

TEST_F(CountingAllocatorTest, AThrowingHookStopsTheAllocation) {
  c10::Allocator* a = counting_allocator();
  const std::int64_t before = live_bytes();
  pt::AllocationWindow window(&throwing_hook);
  EXPECT_THROW(a->allocate(100), std::runtime_error);
  EXPECT_EQ(live_bytes(), before);
  EXPECT_EQ(window.pending_bytes(), 0);
  // The window is still open: the hook runs (and throws) again.
  EXPECT_THROW(a->allocate(100), std::runtime_error);
}

TEST_F(CountingAllocatorTest, AllocationsInsideAHookDoNotReenterIt) {
  c10::Allocator* a = counting_allocator();
  const std::int64_t before = live_bytes();
  {
    ScopedOutsideHook outside(&allocating_hook);
    pt::AllocationWindow window(&allocating_hook);
    c10::DataPtr x = a->allocate(100);
    c10::DataPtr y = a->allocate(100);
    // One call per allocation: the hook's own 8 bytes called no hook.
    EXPECT_EQ(t_calls.size(), 2u);
    EXPECT_EQ(window.pending_bytes(), 200);
  }
  EXPECT_EQ(live_bytes(), before);
}

TEST_F(CountingAllocatorTest, OutsideHookSeesAllocationsOutsideWindows) {
  c10::Allocator* a = counting_allocator();
  ScopedOutsideHook outside(&recording_hook);
  c10::DataPtr x = a->allocate(64);
  {
    pt::AllocationWindow window(&recording_hook);
    c10::DataPtr y = a->allocate(32);  // the window's hook, once
  }
  EXPECT_EQ(t_calls, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                         {0, 64}, {0, 32}}));
}

TEST_F(CountingAllocatorTest, SetOutsideHookReturnsThePreviousOne) {
  // dtr installs its own hook (process-wide budgets) when it loads.
  const pt::AllocationHook dtr_hook = pt::set_outside_hook(&recording_hook);
  EXPECT_NE(dtr_hook, nullptr);
  EXPECT_EQ(pt::set_outside_hook(&throwing_hook), &recording_hook);
  EXPECT_EQ(pt::set_outside_hook(dtr_hook), &throwing_hook);
}

TEST_F(CountingAllocatorTest, CountsStayExactUnderConcurrentAllocations) {
  // Every thread allocates and frees in a loop with its own window open,
  // keeping one block per round; all threads run at once. The counts must
  // come out as if the rounds had run one after another.
  c10::Allocator* a = counting_allocator();
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  const std::int64_t before = live_bytes();
  std::latch allocated(kThreads + 1), release(1);
  std::vector<std::int64_t> pending(kThreads), expected_pending(kThreads);
  std::vector<std::size_t> hook_calls(kThreads);
  std::int64_t expected_live = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    const std::int64_t kept_bytes = 16 * (t + 1);
    expected_live += kRounds * kept_bytes;
    expected_pending[t] = kRounds * kept_bytes;
    threads.emplace_back([&, t, kept_bytes] {
      t_call_count = 0;
      std::vector<c10::DataPtr> kept;
      kept.reserve(kRounds);
      {
        pt::AllocationWindow window(&counting_hook);
        for (int i = 0; i < kRounds; ++i) {
          c10::DataPtr scratch = a->allocate(1 + (i + t) % 64);
          kept.push_back(a->allocate(kept_bytes));
        }
        pending[t] = window.pending_bytes();
        hook_calls[t] = t_call_count;
        allocated.arrive_and_wait();
        release.wait();
      }
      kept.clear();
    });
  }
  allocated.arrive_and_wait();
  const pt::AllocatorCounters all_live = pt::cpu_accounting().counters();
  release.count_down();
  for (auto& th : threads) th.join();
  EXPECT_EQ(all_live.bytes, before + expected_live);
  EXPECT_GE(all_live.peak_bytes, before + expected_live);
  EXPECT_EQ(live_bytes(), before);
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE(t);
    EXPECT_EQ(pending[t], expected_pending[t]);  // its own allocations only
    EXPECT_EQ(hook_calls[t], 2u * kRounds);
  }
}

}  // namespace
