// Staging (Note [Staging]): a step replayed from a plan makes the same
// evictions as the run it was recorded from, with no search; a step that
// departs from its plan falls back to the heuristic and keeps the budget.
#include "dtr/core/staging.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "dtr/core/error.h"
#include "dtr/core/runtime.h"
#include "support/checked_executor.h"
#include "support/checked_run.h"
#include "support/random_program.h"

namespace dtr::testing {
namespace {

struct StepsOutcome {
  bool oom = false;
  RuntimeStats stats;
  StagingStats staging;
  std::vector<StepPlan> captured;
  std::vector<std::uint64_t> searches;  // per step
};

enum class Mode { kRecord, kLoop, kPlans };

// Hook run after each instruction of each step: (runtime, step, index,
// tensors of the step's values).
using AfterInstr =
    std::function<void(Runtime&, int, std::size_t, std::vector<TensorId>&)>;

// Runs `p` `steps` times as the steps of a training loop (each step ends by
// releasing and forgetting all it made, so the next starts from the same
// state), checking the budget, the bookkeeping and every output value.
StepsOutcome run_steps(const std::vector<RandomProgram>& per_step,
                       std::int64_t budget, const std::string& heuristic,
                       Mode mode, const std::vector<StepPlan>* plans = nullptr,
                       const AfterInstr& after = nullptr) {
  CheckedExecutor ex;
  Runtime rt({.budget_bytes = budget}, make_heuristic(heuristic), &ex);
  rt.enable_staging();
  rt.staging()->keep_records(true);
  rt.staging()->replay_previous(mode == Mode::kLoop);
  if (plans) rt.staging()->load(*plans);
  StepsOutcome out;
  std::uint64_t searches_before = 0;
  for (int step = 0; step < static_cast<int>(per_step.size()); ++step) {
    const RandomProgram& p = per_step[step];
    rt.begin_step();
    std::vector<TensorId> tensor(p.value_count, kNoId);
    std::vector<int> refs(p.value_count, 0);
    try {
      for (std::size_t i = 0; i < p.instrs.size(); ++i) {
        const Instr& ins = p.instrs[i];
        if (apply_instr(rt, ex, ins, tensor)) {
          // Reference counts the step holds, dropped when it ends.
          if (ins.kind == Instr::kRelease) {
            --refs[ins.value];
          } else if (ins.kind == Instr::kRetain) {
            ++refs[ins.value];
          } else {
            const int n = ins.kind == Instr::kCall
                              ? static_cast<int>(ins.outputs.size())
                              : 1;
            for (int k = 0; k < n; ++k) refs[ins.value + k] = 1;
          }
        } else {  // an output: read it, keep it to the end
          const TensorId t = tensor[ins.value];
          rt.materialize(t);
          EXPECT_EQ(ex.read(t), ex.truth(t)) << "output value changed";
        }
        if (after) after(rt, step, i, tensor);
        EXPECT_LE(rt.stats().memory_bytes, budget);
        EXPECT_LE(rt.stats().peak_bytes, budget);
      }
    } catch (const OutOfMemory&) {
      out.oom = true;
      break;
    }
    rt.check_invariants();
    for (int v = 0; v < p.value_count; ++v) {
      for (; refs[v] > 0; --refs[v]) rt.release(tensor[v]);
    }
    for (int v = 0; v < p.value_count; ++v) rt.forget(tensor[v]);
    out.searches.push_back(rt.stats().eviction_searches - searches_before);
    searches_before = rt.stats().eviction_searches;
  }
  rt.begin_step();  // closes the last step
  out.stats = rt.stats();
  out.staging = rt.staging()->stats();
  out.captured = rt.staging()->captured();
  return out;
}

std::int64_t peak_of(const RandomProgram& p) {
  StepsOutcome free =
      run_steps({p}, kUnlimitedBytes, "dtr", Mode::kRecord, nullptr);
  return free.stats.peak_bytes;
}

// The lowest budget of a few ratios of the peak at which `p` runs and
// evicts (so that there is something to stage).
std::int64_t evicting_budget(const RandomProgram& p,
                             const std::string& heuristic) {
  const std::int64_t peak = peak_of(p);
  std::int64_t best = 0;
  for (double ratio : {0.9, 0.8, 0.7, 0.6, 0.5, 0.4}) {
    const auto budget = static_cast<std::int64_t>(ratio * peak);
    StepsOutcome run = run_steps({p}, budget, heuristic, Mode::kRecord);
    if (run.oom) break;
    if (run.stats.evictions > 0) best = budget;
  }
  EXPECT_GT(best, 0) << "no budget makes the program evict";
  return best;
}

struct Case {
  Shape shape;
  std::string heuristic;
};

class StagingPropertyTest : public ::testing::TestWithParam<Case> {};

// The loaded plans of a recorded run reproduce it exactly: the same
// compute, peak and evictions, and not one search.
TEST_P(StagingPropertyTest, ReplayedPlansMatchTheOnlineRunWithNoSearch) {
  const Case& c = GetParam();
  int evicting = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const RandomProgram p = make_random_program(c.shape, 10, seed);
    const std::vector<RandomProgram> steps(3, p);
    const std::int64_t peak = peak_of(p);
    for (double ratio : {0.9, 0.7, 0.6, 0.5, 0.4}) {
      SCOPED_TRACE(std::string(shape_name(c.shape)) + " seed " +
                   std::to_string(seed) + " ratio " + std::to_string(ratio));
      const auto budget = static_cast<std::int64_t>(ratio * peak);
      StepsOutcome online =
          run_steps(steps, budget, c.heuristic, Mode::kRecord);
      if (online.oom) continue;
      evicting += online.stats.evictions > 0;
      ASSERT_EQ(online.captured.size(), 3u);
      StepsOutcome staged =
          run_steps(steps, budget, c.heuristic, Mode::kPlans, &online.captured);
      ASSERT_FALSE(staged.oom);
      EXPECT_EQ(staged.stats.clock_ns, online.stats.clock_ns);
      EXPECT_EQ(staged.stats.remat_compute_ns, online.stats.remat_compute_ns);
      EXPECT_EQ(staged.stats.peak_bytes, online.stats.peak_bytes);
      EXPECT_EQ(staged.stats.evictions, online.stats.evictions);
      EXPECT_EQ(staged.stats.eviction_searches, 0u);
      EXPECT_EQ(staged.staging.planned_evictions, online.stats.evictions);
      EXPECT_EQ(staged.staging.staged_steps, 3u);
      EXPECT_EQ(staged.staging.diverged_steps, 0u);
    }
  }
  EXPECT_GT(evicting, 0) << "no run evicted: the check is vacuous";
}

// A training loop: the first step searches and is recorded, every later
// step repeats it and is staged from the one before.
TEST_P(StagingPropertyTest, LoopStagesEveryStepAfterTheFirst) {
  const Case& c = GetParam();
  const RandomProgram p = make_random_program(c.shape, 10, 5);
  const std::int64_t budget = evicting_budget(p, c.heuristic);
  StepsOutcome loop = run_steps(std::vector<RandomProgram>(4, p), budget,
                                c.heuristic, Mode::kLoop);
  ASSERT_FALSE(loop.oom);
  ASSERT_GT(loop.searches[0], 0u);
  EXPECT_EQ(loop.staging.steps, 4u);
  EXPECT_EQ(loop.staging.staged_steps, 3u);
  EXPECT_EQ(loop.staging.diverged_steps, 0u);
  for (std::size_t s = 1; s < loop.searches.size(); ++s) {
    EXPECT_EQ(loop.searches[s], 0u) << "step " << s;
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (Shape s :
       {Shape::kChain, Shape::kDiamond, Shape::kTree, Shape::kResidual}) {
    for (const char* h : {"dtr", "dtr-eq", "lru", "msps"}) {
      cases.push_back({s, h});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, StagingPropertyTest,
                         ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name =
                               std::string(shape_name(info.param.shape)) + "_" +
                               info.param.heuristic;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

// A step whose program changes mid-way (an output of another size) falls
// back to the search from there, counted, and still keeps the budget (the
// run checks it after every instruction) and every value.
TEST(StagingTest, ADifferentCallMidStepFallsBackAndKeepsTheBudget) {
  const RandomProgram a = make_random_program(Shape::kResidual, 12, 3);
  RandomProgram b = a;
  std::size_t changed = 0;
  for (std::size_t i = b.instrs.size() / 2; i < b.instrs.size(); ++i) {
    if (b.instrs[i].kind == Instr::kCall && b.instrs[i].outputs[0].bytes > 0) {
      b.instrs[i].outputs[0].bytes += 64;
      changed = i;
      break;
    }
  }
  ASSERT_GT(changed, 0u);
  const std::int64_t budget = evicting_budget(a, "dtr");
  StepsOutcome loop = run_steps({a, a, b, a}, budget, "dtr", Mode::kLoop);
  ASSERT_FALSE(loop.oom);
  EXPECT_EQ(loop.searches[1], 0u);             // staged
  EXPECT_GT(loop.searches[2], 0u);             // diverged: searched
  EXPECT_EQ(loop.staging.diverged_steps, 2u);  // b, then a again after b
  EXPECT_EQ(loop.staging.staged_steps, 1u);
}

// Another operator (same sizes) is another program: the step diverges even
// if the recorded evictions would still fit.
TEST(StagingTest, ACallOfAnotherNameDiverges) {
  const RandomProgram a = make_random_program(Shape::kDiamond, 8, 4);
  RandomProgram b = a;
  for (std::size_t i = b.instrs.size() / 2; i < b.instrs.size(); ++i) {
    if (b.instrs[i].kind == Instr::kCall) {
      b.instrs[i].name += "_other";
      break;
    }
  }
  const std::int64_t budget = evicting_budget(a, "dtr");
  StepsOutcome loop = run_steps({a, b}, budget, "dtr", Mode::kLoop);
  ASSERT_FALSE(loop.oom);
  EXPECT_EQ(loop.staging.diverged_steps, 1u);
  EXPECT_EQ(loop.staging.staged_steps, 0u);
}

// A planned victim that cannot be evicted any more (pinned by the program
// in this step) makes the step fall back there, rather than evict
// something else or go on with the plan.
TEST(StagingTest, AnUnevictablePlannedVictimFallsBack) {
  const RandomProgram p = make_random_program(Shape::kChain, 12, 2);
  const auto budget = static_cast<std::int64_t>(0.8 * peak_of(p));
  StepsOutcome online = run_steps({p}, budget, "dtr", Mode::kRecord);
  ASSERT_FALSE(online.oom);
  // A victim of the last request, evicted by no earlier one: pin it right
  // after the call that made it in the staged run. Every planned eviction
  // before it still happens; the request then has to search, so the step
  // is not staged (it has no later request that could notice).
  const StepPlan& plan = online.captured.at(0);
  ASSERT_FALSE(plan.rooms.empty());
  std::optional<VictimRef> first;
  std::uint64_t planned_before = 0;
  for (const VictimRef& v : plan.rooms.back().victims) {
    bool earlier = false;
    for (std::size_t r = 0; r + 1 < plan.rooms.size(); ++r) {
      for (const VictimRef& e : plan.rooms[r].victims) earlier |= e == v;
    }
    if (!first && !earlier && v.kind == VictimRef::Kind::kThisStep) first = v;
  }
  ASSERT_TRUE(first.has_value());
  for (std::size_t r = 0; r + 1 < plan.rooms.size(); ++r) {
    planned_before += plan.rooms[r].victims.size();
  }
  for (const VictimRef& v : plan.rooms.back().victims) {
    if (v == *first) break;
    ++planned_before;
  }
  std::uint32_t calls = 0;
  AfterInstr pin_victim = [&](Runtime& rt, int, std::size_t i,
                              std::vector<TensorId>& tensor) {
    const Instr& ins = p.instrs[i];
    if (ins.kind != Instr::kCall && ins.kind != Instr::kConstant) return;
    if (calls++ == first->call) rt.pin(tensor[ins.value + first->output]);
  };
  StepsOutcome staged =
      run_steps({p}, budget, "dtr", Mode::kPlans, &online.captured, pin_victim);
  ASSERT_FALSE(staged.oom);
  EXPECT_EQ(staged.staging.diverged_steps, 1u);
  EXPECT_EQ(staged.staging.planned_evictions, planned_before);
  EXPECT_GT(staged.stats.eviction_searches, 0u);
}

// A request the frontend lets fail (it catches the OutOfMemory and goes on
// another way, as the LibTorch layer's fallbacks do) is part of the plan:
// replayed, it runs dry again once every planned victim is gone, and the
// step stays staged (before, each such step diverged there).
TEST(StagingTest, ARequestThatRanOutWhenRecordedStaysStaged) {
  Runtime rt({.budget_bytes = 1000}, make_heuristic("dtr"));
  rt.enable_staging();
  const TensorId c = rt.add_constant(100);
  const OutputSpec out{.bytes = 400};
  for (int step = 0; step < 3; ++step) {
    rt.begin_step();
    const TensorId a = rt.call("f", {&c, 1}, {&out, 1}, 10)[0];
    const TensorId b = rt.call("g", {&a, 1}, {&out, 1}, 10)[0];
    EXPECT_THROW(rt.make_room(2000), OutOfMemory);
    const TensorId d = rt.call("h", {&b, 1}, {&out, 1}, 10)[0];
    for (TensorId t : {a, b, d}) rt.release(t);
  }
  rt.begin_step();
  // The constant's step, then three: the first follows the constant step's
  // record and diverges at once; the two after it follow the first's.
  EXPECT_EQ(rt.staging()->stats().steps, 4u);
  EXPECT_EQ(rt.staging()->stats().staged_steps, 2u);
  EXPECT_EQ(rt.staging()->stats().diverged_steps, 1u);
  EXPECT_LE(rt.stats().peak_bytes, 1000);
}

TEST(StagingTest, TwoBoundariesWithNoCallBetweenAreOne) {
  Runtime rt({.budget_bytes = 1000}, make_heuristic("dtr"));
  rt.enable_staging();
  rt.begin_step();
  rt.begin_step();
  const TensorId x = rt.add_constant(10);
  rt.begin_step();
  rt.begin_step();
  rt.release(
      rt.call("f", {&x, 1}, std::vector<OutputSpec>{{.bytes = 10}}, 1)[0]);
  rt.begin_step();
  EXPECT_EQ(rt.staging()->stats().steps, 2u);
}

TEST(StagingTest, WithoutStagingBeginStepIsANoOp) {
  Runtime rt({}, make_heuristic("dtr"));
  rt.begin_step();
  EXPECT_EQ(rt.staging(), nullptr);
}

}  // namespace
}  // namespace dtr::testing
