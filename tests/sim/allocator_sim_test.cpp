// The allocator models in the simulator: they observe and change no run,
// the runtime's live bytes are the model's at every step, the reserved
// peak covers the live one, and the perfect model reports reserved = live.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dtr/core/dealloc_policy.h"
#include "dtr/core/heuristic.h"
#include "dtr/core/observer.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "support/same_result.h"

namespace dtr::sim {
namespace {

const std::vector<AllocatorKind> kModels = {AllocatorKind::kBestFit,
                                            AllocatorKind::kCaching};

// With check_allocator every change verifies the layout (no overlap, blocks
// inside their segments, free neighbours merged), reserved >= live, and
// that the model's live bytes equal the runtime's: a breach throws.
TEST(AllocatorSimTest, ModelsObserveWithoutChangingTheRun) {
  for (const char* spec :
       {"model:chain", "model:resnet", "model:lstm", "model:treelstm?seed=3"}) {
    NamedProgram np = load_program(spec);
    const Baseline b = compute_baseline(np.program);
    for (const char* h : {"dtr", "lru", "size"}) {
      for (DeallocPolicy policy :
           {DeallocPolicy::kEager, DeallocPolicy::kBanish}) {
        for (double ratio : {0.9, 0.6, 0.4}) {
          SCOPED_TRACE(std::string(spec) + " " + h + "/" +
                       std::string(to_string(policy)) + " at " +
                       std::to_string(ratio));
          SimConfig c;
          c.heuristic = h;
          c.policy = policy;
          c.budget_ratio = ratio;
          const SimResult perfect = simulate(np.program, b, c);
          EXPECT_EQ(perfect.allocator, AllocatorKind::kPerfect);
          EXPECT_EQ(perfect.reserved_peak_bytes, perfect.peak_bytes);
          EXPECT_EQ(perfect.fragmentation, 0.0);
          EXPECT_EQ(perfect.allocator_ooms, 0u);
          for (AllocatorKind kind : kModels) {
            SCOPED_TRACE(std::string(to_string(kind)));
            c.allocator = kind;
            c.check_allocator = true;
            SimResult r;
            ASSERT_NO_THROW(r = simulate(np.program, b, c));
            testing::expect_same_result(perfect, r);
            EXPECT_EQ(r.allocator, kind);
            EXPECT_GE(r.reserved_peak_bytes, r.peak_bytes);
            EXPECT_GE(r.fragmentation, 0.0);
            EXPECT_LT(r.fragmentation, 1.0);
            // Over the budget means some request could not be placed in it.
            EXPECT_EQ(r.allocator_ooms > 0,
                      r.reserved_peak_bytes > r.budget_bytes)
                << r.reserved_peak_bytes << " vs " << r.budget_bytes;
            EXPECT_EQ(r.first_allocator_oom_ns >= 0, r.allocator_ooms > 0);
          }
          c.allocator = AllocatorKind::kPerfect;
          c.check_allocator = false;
        }
      }
    }
  }
}

// A profile and an allocator model watch one run: the profile still sees
// every hook.
class CountingObserver : public RuntimeObserver {
 public:
  void on_op_begin(std::int64_t) override { ++ops; }
  void on_evicted(const Graph&, const EvictionEvent&) override { ++evicted; }
  void on_memory_changed(std::int64_t bytes, std::int64_t) override {
    memory.push_back(bytes);
  }
  int ops = 0;
  int evicted = 0;
  std::vector<std::int64_t> memory;
};

TEST(AllocatorSimTest, AnInnerObserverSeesTheSameRun) {
  NamedProgram np = load_program("model:resnet");
  const Baseline b = compute_baseline(np.program);
  SimConfig c;
  c.budget_ratio = 0.5;
  CountingObserver alone;
  c.observer = &alone;
  simulate(np.program, b, c);
  CountingObserver beside;
  c.observer = &beside;
  c.allocator = AllocatorKind::kCaching;
  simulate(np.program, b, c);
  EXPECT_GT(alone.evicted, 0);
  EXPECT_EQ(alone.ops, beside.ops);
  EXPECT_EQ(alone.evicted, beside.evicted);
  EXPECT_EQ(alone.memory, beside.memory);
}

}  // namespace
}  // namespace dtr::sim
