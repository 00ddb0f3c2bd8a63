// The DTR arena (dtr/sim/allocator/arena.h): storages placed best fit in
// one region of exactly the budget, eviction of the cheapest contiguous
// window when no hole fits; on the runtime directly, on random programs
// (the property harness) and in the simulator.
#include "dtr/sim/allocator/arena.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dtr/core/runtime.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "support/checked_run.h"

namespace dtr::sim {
namespace {

TensorId make(Runtime& rt, const char* name, std::int64_t bytes,
              std::int64_t cost) {
  OutputSpec out{bytes, -1};
  return rt.call(name, {}, {&out, 1}, cost)[0];
}

bool resident(const Runtime& rt, TensorId t) {
  return rt.graph().storage(rt.graph().tensor(t).storage).resident;
}

// A runtime of `budget` bytes whose storages an arena of that size places.
struct ArenaRuntime {
  explicit ArenaRuntime(std::int64_t budget)
      : rt(options(budget), make_heuristic("dtr")), arena(budget, true) {
    rt.set_placement(&arena);
  }
  static RuntimeOptions options(std::int64_t budget) {
    RuntimeOptions o;
    o.budget_bytes = budget;
    return o;
  }
  Runtime rt;
  Arena arena;
};

// a b c d of 50 bytes fill an arena of 200; c is expensive. A request of
// 100 needs two adjacent blocks: a+b is the cheapest pair, although the
// live budget alone would also accept evicting a and d.
TEST(ArenaTest, EvictsTheCheapestAdjacentWindow) {
  ArenaRuntime run(200);
  Runtime& rt = run.rt;
  Arena& arena = run.arena;
  const TensorId a = make(rt, "a", 50, 1);
  const TensorId b = make(rt, "b", 50, 1);
  const TensorId c = make(rt, "c", 50, 1000);
  const TensorId d = make(rt, "d", 50, 1);
  EXPECT_FALSE(arena.fits(1));
  make(rt, "e", 100, 1);
  EXPECT_FALSE(resident(rt, a));
  EXPECT_FALSE(resident(rt, b));
  EXPECT_TRUE(resident(rt, c));
  EXPECT_TRUE(resident(rt, d));
  EXPECT_EQ(arena.live_bytes(), rt.stats().memory_bytes);
  EXPECT_EQ(arena.reserved_peak_bytes(), 200);
  EXPECT_EQ(arena.failures(), 0u);
}

// Enough free bytes in total, but split in two holes: the arena evicts
// even though the live budget would not.
TEST(ArenaTest, EvictsWhenTheFreeBytesAreNotContiguous) {
  ArenaRuntime run(300);
  Runtime& rt = run.rt;
  const TensorId a = make(rt, "a", 100, 1);
  const TensorId b = make(rt, "b", 100, 1);
  const TensorId c = make(rt, "c", 100, 1);
  rt.release(a);  // eager: a and c leave two holes of 100
  rt.release(c);
  EXPECT_EQ(rt.stats().memory_bytes, 100);
  make(rt, "d", 200, 1);
  EXPECT_FALSE(resident(rt, b));
  EXPECT_EQ(rt.stats().evictions, 1u);
}

TEST(ArenaTest, NoWindowIsOutOfMemory) {
  ArenaRuntime run(100);
  Runtime& rt = run.rt;
  const TensorId a = make(rt, "a", 60, 1);
  rt.pin(a);
  EXPECT_THROW(make(rt, "b", 60, 1), OutOfMemory);
}

// Only windows make room: an arena larger than the budget can offer a free
// hole the budget cannot afford, and then the run is out of memory rather
// than looping.
TEST(ArenaTest, AWindowWithNothingToEvictIsOutOfMemory) {
  RuntimeOptions o;
  o.budget_bytes = 100;
  Runtime rt(o, make_heuristic("dtr"));
  Arena arena(200, /*check=*/true);
  rt.set_placement(&arena);
  make(rt, "a", 60, 1);
  EXPECT_THROW(make(rt, "b", 60, 1), OutOfMemory);
}

// The property harness with an arena: outputs keep their values, the
// layout stays valid at every change, and nothing leaves the arena.
TEST(ArenaTest, RandomProgramsKeepTheInvariants) {
  using testing::Shape;
  int evicting = 0;
  for (Shape shape :
       {Shape::kChain, Shape::kDiamond, Shape::kTree, Shape::kResidual}) {
    for (const char* heuristic : {"dtr", "lru", "size"}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const testing::RandomProgram p =
            testing::make_random_program(shape, 12, seed);
        const testing::CheckedOutcome base =
            testing::run_checked(p, RuntimeOptions{}, heuristic);
        for (double ratio : {0.9, 0.6, 0.4}) {
          SCOPED_TRACE(std::string(testing::shape_name(shape)) + " " +
                       heuristic + " seed " + std::to_string(seed) + " ratio " +
                       std::to_string(ratio));
          RuntimeOptions o;
          o.seed = seed;
          o.budget_bytes =
              static_cast<std::int64_t>(ratio * base.stats.peak_bytes);
          Arena arena(o.budget_bytes, /*check=*/true);
          testing::CheckedOutcome run;
          ASSERT_NO_THROW(run = testing::run_checked(p, o, heuristic, false,
                                                     ChoiceMode::kIndex,
                                                     nullptr, &arena));
          if (!run.oom && !run.thrash) {
            EXPECT_EQ(run.outputs, base.outputs);
            evicting += run.stats.evictions > 0;
          }
          EXPECT_EQ(arena.failures(), 0u);
          EXPECT_EQ(arena.reserved_peak_bytes(), o.budget_bytes);
          EXPECT_EQ(arena.live_bytes(), run.stats.memory_bytes);
        }
      }
    }
  }
  EXPECT_GT(evicting, 0);
}

// In the simulator: the reserved peak is the budget, no request is placed
// outside it, and the live budget holds as before.
TEST(ArenaTest, SimulatedRunsReserveExactlyTheBudget) {
  for (const char* spec : {"model:chain", "model:resnet", "model:lstm"}) {
    NamedProgram np = load_program(spec);
    const Baseline b = compute_baseline(np.program);
    for (const char* h : {"dtr", "dtr-eq", "msps"}) {
      for (double ratio : {0.9, 0.6, 0.4}) {
        SCOPED_TRACE(std::string(spec) + " " + h + " at " +
                     std::to_string(ratio));
        SimConfig c;
        c.heuristic = h;
        c.budget_ratio = ratio;
        c.allocator = AllocatorKind::kArena;
        c.check_allocator = true;
        SimResult r;
        ASSERT_NO_THROW(r = simulate(np.program, b, c));
        EXPECT_EQ(r.allocator, AllocatorKind::kArena);
        EXPECT_EQ(r.reserved_peak_bytes, r.budget_bytes);
        EXPECT_EQ(r.allocator_ooms, 0u);
        EXPECT_LE(r.peak_bytes, r.budget_bytes);
        if (r.status == SimStatus::kOk) {
          EXPECT_EQ(r.model_compute_ns, b.compute_ns);
        }
      }
    }
  }
}

}  // namespace
}  // namespace dtr::sim
