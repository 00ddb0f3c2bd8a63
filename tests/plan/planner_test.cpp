#include "dtr/plan/planner.h"

#include <gtest/gtest.h>
#include <math.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <random>

#include "dtr/core/error.h"
#include "dtr/plan/lp_round.h"
#include "dtr/plan/milp.h"
#include "dtr/plan/revolve.h"
#include "dtr/plan/stage_plan.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "plan/plan_fixtures.h"

namespace dtr::plan {
namespace {

using testing::TraceText;

constexpr double kTimeLimit = 30;

StaticGraph model_graph(const std::string& spec) {
  return build_static_graph(sim::load_program(spec).program);
}

PlanResult plan(const StaticGraph& g, const std::string& planner,
                std::int64_t budget, double time_limit = kTimeLimit) {
  return run_planner(
      g,
      {.planner = planner, .budget_bytes = budget, .time_limit_s = time_limit});
}

bool fits(const PlanResult& r) {
  return r.status == PlanStatus::kOptimal || r.status == PlanStatus::kFeasible;
}

// The peak of checkpoint-all: enough memory for no recomputation.
std::int64_t keep_all_peak(const StaticGraph& g) {
  return plan(g, "checkpoint-all", std::numeric_limits<std::int64_t>::max())
      .peak_bytes;
}

// Brute force over every S of the frontier-advancing form (R recovered
// optimally from S): the least compute, and the least peak of any plan.
struct BruteForce {
  std::int64_t best_compute = std::numeric_limits<std::int64_t>::max();
  std::int64_t min_peak = std::numeric_limits<std::int64_t>::max();
};

BruteForce brute_force(const StaticGraph& g, std::int64_t budget) {
  const std::size_t n = g.size();
  std::vector<std::pair<std::size_t, std::size_t>> cells;
  for (std::size_t t = 1; t < n; ++t) {
    for (std::size_t i = 0; i < t; ++i) cells.push_back({t, i});
  }
  EXPECT_LE(cells.size(), 16u) << "too large for brute force";
  BruteForce out;
  for (std::uint32_t mask = 0; mask < (1u << cells.size()); ++mask) {
    StagePlan p;
    p.S.assign(n, std::vector<bool>(n, false));
    for (std::size_t k = 0; k < cells.size(); ++k) {
      p.S[cells[k].first][cells[k].second] = (mask >> k) & 1u;
    }
    fill_compute_sets(g, p);
    Schedule s = schedule_from_stages(g, p);
    Validation any =
        validate_schedule(g, s, std::numeric_limits<std::int64_t>::max());
    if (!any.ok) continue;
    out.min_peak = std::min(out.min_peak, any.peak_bytes);
    if (any.peak_bytes <= budget) {
      out.best_compute = std::min(out.best_compute, any.compute_ns);
    }
  }
  return out;
}

// Five nodes: a chain with a skip connection and a backward pass.
StaticGraph tiny_graph() {
  TraceText t;
  t.constant("x", 4)
      .call("f1", {"x"}, {{"a", 40}}, 5)
      .call("f2", {"a"}, {{"b", 30}}, 7)
      .call("f3", {"a", "b"}, {{"c", 40}}, 3)
      .backward()
      .call("g2", {"c", "b"}, {{"gb", 10}}, 4)
      .call("g1", {"gb", "a"}, {{"ga", 10}}, 6);
  for (const char* v : {"a", "b", "c", "gb"}) t.release(v);
  return t.graph();
}

TEST(PlannerTest, EveryPlannerReturnsAValidatedScheduleOrAStatus) {
  for (const char* spec : {"model:chain?depth=6", "model:resnet?depth=8"}) {
    StaticGraph g = model_graph(spec);
    std::int64_t full = keep_all_peak(g);
    for (double ratio : {1.0, 0.8, 0.6}) {
      auto budget = static_cast<std::int64_t>(ratio * full);
      for (const std::string& name : planner_names()) {
        if ((name == "milp" || name == "lp-round") && g.size() > 20) continue;
        PlanResult r = plan(g, name, budget);
        SCOPED_TRACE(std::string(spec) + " " + name + " " +
                     std::to_string(ratio));
        EXPECT_TRUE(r.consistent())
            << r.validation.problem << " / " << r.runtime.problem;
        if (fits(r)) {
          EXPECT_LE(r.peak_bytes, budget);
          EXPECT_GE(r.compute_ns, g.baseline_cost_ns());
          EXPECT_EQ(r.runtime.peak_bytes, r.peak_bytes);
        }
      }
    }
    // With memory for everything nobody recomputes.
    PlanResult all = plan(g, "checkpoint-all", full);
    EXPECT_EQ(all.status, PlanStatus::kFeasible) << spec;
    EXPECT_EQ(all.compute_ns, g.baseline_cost_ns()) << spec;
  }
}

TEST(PlannerTest, MilpEqualsBruteForceOnATinyGraph) {
  StaticGraph g = tiny_graph();
  ASSERT_EQ(g.size(), 5u);
  BruteForce any = brute_force(g, std::numeric_limits<std::int64_t>::max());
  std::int64_t full = keep_all_peak(g);
  ASSERT_LT(any.min_peak, full);  // there is something to trade
  EXPECT_GT(brute_force(g, any.min_peak).best_compute, g.baseline_cost_ns());
  for (std::int64_t budget = any.min_peak; budget <= full; budget += 10) {
    BruteForce bf = brute_force(g, budget);
    PlanResult r = plan(g, "milp", budget);
    SCOPED_TRACE("budget " + std::to_string(budget));
    ASSERT_EQ(r.status, PlanStatus::kOptimal) << r.message;
    EXPECT_TRUE(r.consistent());
    EXPECT_EQ(r.compute_ns, bf.best_compute);
  }
}

// A random trace of `ops` calls: one or two arguments each, one or two new
// outputs, sometimes a view of the first argument; half of the values
// released at the end, the rest are outputs.
TraceText random_trace(std::mt19937& rng, int ops) {
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  TraceText t;
  std::vector<std::string> values{"w0", "w1"};
  t.constant("w0", 8 * (1 + pick(4))).constant("w1", 8 * (1 + pick(4)));
  for (int k = 0; k < ops; ++k) {
    if (k == ops / 2) t.backward();
    std::vector<std::string> args{values[pick(values.size())]};
    if (pick(2)) args.push_back(values[pick(values.size())]);
    std::vector<testing::Result> results;
    for (int j = 0, n = 1 + pick(2); j < n; ++j) {
      std::string name = "v";  // appended: gcc 12 -Wrestrict false positive
      name += std::to_string(k);
      name += "_";
      name += std::to_string(j);
      results.push_back({name, 10 * (1 + pick(5))});
      values.push_back(name);
    }
    if (pick(4) == 0) {
      std::string name = "view";
      name += std::to_string(k);
      results.push_back({name, 0, 0});
      values.push_back(name);
    }
    std::string op = "op";
    op += std::to_string(k);
    t.call(op, args, results, 1 + pick(20));
  }
  for (std::size_t v = 2; v < values.size(); ++v) {
    if (pick(2)) t.release(values[v]);
  }
  return t;
}

TEST(PlannerTest, RandomGraphsEveryPlannerChecksOutAndMilpIsExact) {
  std::mt19937 rng(12345);
  int exact = 0;
  for (int trial = 0; trial < 60; ++trial) {
    StaticGraph g = random_trace(rng, 4).graph();
    if (g.size() < 2 || g.size() > 6) continue;  // brute force: 15 cells
    BruteForce any = brute_force(g, std::numeric_limits<std::int64_t>::max());
    std::int64_t full = keep_all_peak(g);
    for (std::int64_t budget :
         {any.min_peak - 1, any.min_peak, (any.min_peak + full) / 2, full}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " budget " +
                   std::to_string(budget));
      BruteForce bf = brute_force(g, budget);
      PlanResult milp = plan(g, "milp", budget);
      ASSERT_TRUE(milp.consistent()) << milp.validation.problem;
      if (budget < any.min_peak) {
        EXPECT_EQ(milp.status, PlanStatus::kInfeasible);
      } else {
        ASSERT_EQ(milp.status, PlanStatus::kOptimal) << milp.message;
        EXPECT_EQ(milp.compute_ns, bf.best_compute);
        // Every bound reported is one.
        EXPECT_LE(milp.lower_bound_ns, bf.best_compute);
        PlanResult lp = plan(g, "lp-round", budget);
        EXPECT_LE(lp.lower_bound_ns, bf.best_compute);
        ++exact;
      }
      for (const std::string& name : planner_names()) {
        PlanResult r = plan(g, name, budget);
        EXPECT_TRUE(r.consistent()) << name << ": " << r.validation.problem
                                    << " / " << r.runtime.problem;
        if (fits(r)) {
          EXPECT_LE(milp.compute_ns, r.compute_ns) << name;
        }
      }
    }
  }
  EXPECT_GT(exact, 40);  // the graphs were not all degenerate
}

TEST(PlannerTest, MilpIsInfeasibleJustBelowTheLeastMemory) {
  StaticGraph g = tiny_graph();
  BruteForce bf = brute_force(g, std::numeric_limits<std::int64_t>::max());
  PlanResult at = plan(g, "milp", bf.min_peak);
  EXPECT_EQ(at.status, PlanStatus::kOptimal);
  PlanResult below = plan(g, "milp", bf.min_peak - 1);
  EXPECT_EQ(below.status, PlanStatus::kInfeasible) << below.message;
  EXPECT_TRUE(below.schedule.steps.empty());
  // The LP relaxation is not a proof of feasibility: lp-round may fail to
  // round, but never claims a schedule that does not fit.
  PlanResult lp = plan(g, "lp-round", bf.min_peak - 1);
  EXPECT_FALSE(fits(lp)) << to_string(lp.status);
}

TEST(PlannerTest, MilpIsNoWorseThanAnyOtherPlannerOrDtr) {
  struct Case {
    StaticGraph g;
    trace::Program program;
  };
  std::vector<Case> cases;
  trace::Program chain = sim::load_program("model:chain?depth=6").program;
  cases.push_back({build_static_graph(chain), chain});
  trace::Program skip = testing::skip_training_trace().program();
  cases.push_back({build_static_graph(skip), skip});
  for (const Case& c : cases) {
    sim::Baseline baseline = sim::compute_baseline(c.program);
    for (double ratio : {0.9, 0.7, 0.5}) {
      std::int64_t budget = sim::budget_for_ratio(ratio, baseline.peak_bytes);
      PlanResult milp = plan(c.g, "milp", budget);
      SCOPED_TRACE("ratio " + std::to_string(ratio));
      ASSERT_TRUE(milp.consistent());
      for (const std::string& name : planner_names()) {
        PlanResult r = plan(c.g, name, budget);
        if (!fits(r)) continue;
        ASSERT_TRUE(fits(milp)) << name << " fits where milp does not";
        EXPECT_LE(milp.compute_ns, r.compute_ns) << name;
      }
      sim::SimConfig config;
      config.budget_bytes = budget;
      config.thrash_limit = std::numeric_limits<double>::infinity();
      for (const char* h : {"dtr", "dtr-eq", "lru"}) {
        config.heuristic = h;
        sim::SimResult s = sim::simulate(c.program, baseline, config);
        if (s.status != sim::SimStatus::kOk) continue;
        ASSERT_TRUE(fits(milp)) << h << " fits where milp does not";
        EXPECT_LE(milp.compute_ns, s.model_compute_ns + s.remat_compute_ns)
            << h;
      }
    }
  }
}

TEST(PlannerTest, MilpTimeLimitIsAStatus) {
  StaticGraph g = model_graph("model:chain?depth=24");
  std::int64_t budget = keep_all_peak(g) / 4;
  PlanResult r = plan(g, "milp", budget, /*time_limit=*/0.05);
  EXPECT_TRUE(r.status == PlanStatus::kTimeLimit ||
              r.status == PlanStatus::kFeasible)
      << to_string(r.status) << ": " << r.message;
  EXPECT_TRUE(r.consistent());
  if (r.status == PlanStatus::kFeasible) {
    EXPECT_GE(r.gap, 0.0);
  }
}

TEST(PlannerTest, MilpCutShortStillBeatsTheFixedPlannersItStartsFrom) {
  // Too large to prove optimal in 2 s; the MIP start is the best
  // fixed-rule plan, so the MILP can only improve on it.
  StaticGraph g = model_graph("model:chain?depth=16");
  std::int64_t budget = keep_all_peak(g) * 2 / 5;
  PlanResult milp = plan(g, "milp", budget, /*time_limit=*/2);
  ASSERT_TRUE(fits(milp)) << to_string(milp.status) << ": " << milp.message;
  EXPECT_TRUE(milp.consistent());
  EXPECT_NE(milp.message.find("started from"), std::string::npos);
  for (const char* name : {"chen-sqrtn", "chen-greedy", "revolve"}) {
    PlanResult r = plan(g, name, budget);
    if (fits(r)) {
      EXPECT_LE(milp.compute_ns, r.compute_ns) << name;
    }
  }
}

// Griewank & Walther's closed form for the forward steps of a reversal of
// l steps with s checkpoints: r l - C(s + r, r - 1), r the least integer
// with C(s + r, s) >= l (the start state counts as a checkpoint).
std::int64_t binomial(std::int64_t n, std::int64_t k) {
  if (k < 0 || k > n) return 0;
  std::int64_t out = 1;
  for (std::int64_t j = 1; j <= k; ++j) out = out * (n - k + j) / j;
  return out;
}

std::int64_t griewank_forward_steps(std::int64_t l, std::int64_t s) {
  std::int64_t r = 0;
  while (binomial(s + r, s) < l) ++r;
  return r * l - binomial(s + r, r - 1);
}

TEST(RevolveTest, RecomputationsMatchTheBinomialClosedForm) {
  for (std::int64_t l = 1; l <= 60; ++l) {
    for (std::int64_t c = 0; c <= 6; ++c) {
      EXPECT_EQ(revolve_recomputations(l, c), griewank_forward_steps(l, c + 1))
          << "l " << l << " c " << c;
    }
  }
}

TEST(RevolveTest, UniformChainScheduleRecomputesExactlyTheOptimum) {
  const std::int64_t depth = 12;
  StaticGraph g = model_graph("model:chain?depth=" + std::to_string(depth));
  std::string why;
  auto chain = forward_chain(g, &why);
  ASSERT_TRUE(chain) << why;
  ASSERT_EQ(static_cast<std::int64_t>(chain->size()), depth);
  const std::int64_t unit = g.nodes[(*chain)[0]].cost_ns;
  for (std::int64_t slots = 0; slots <= depth; ++slots) {
    Schedule s = schedule_from_stages(g, revolve_plan(g, *chain, slots));
    Validation v =
        validate_schedule(g, s, std::numeric_limits<std::int64_t>::max());
    ASSERT_TRUE(v.ok) << v.problem;
    // The first sweep's depth - 1 steps are the trace's own compute.
    EXPECT_EQ(v.compute_ns - g.baseline_cost_ns(),
              unit * (revolve_recomputations(depth, slots) - (depth - 1)))
        << "slots " << slots;
  }
}

TEST(RevolveTest, NotAChainIsUnsupported) {
  StaticGraph g = tiny_graph();  // f3 reads a and b
  PlanResult r = plan(g, "revolve", 1 << 20);
  EXPECT_EQ(r.status, PlanStatus::kUnsupported);
  EXPECT_NE(r.message.find("not a chain"), std::string::npos) << r.message;
}

TEST(ChenTest, SqrtnCheckpointsOnAChainAreEvenlySpaced) {
  StaticGraph g = model_graph("model:chain?depth=16");
  PlanResult r =
      plan(g, "chen-sqrtn", std::numeric_limits<std::int64_t>::max());
  ASSERT_EQ(r.status, PlanStatus::kFeasible);
  // Each forward value is recomputed at most once: overhead below 2x the
  // forward pass.
  EXPECT_GT(r.compute_ns, g.baseline_cost_ns());
  EXPECT_LE(r.compute_ns, g.baseline_cost_ns() + 16 * g.nodes[0].cost_ns);
  EXPECT_LT(r.peak_bytes, keep_all_peak(g));
}

TEST(PlannerTest, BadArgumentsThrow) {
  StaticGraph g = tiny_graph();
  EXPECT_THROW(plan(g, "gurobi", 100), InvalidArgument);
  EXPECT_THROW(plan(g, "milp", -1), InvalidArgument);
  EXPECT_THROW(plan(g, "milp", 100, 0.0), InvalidArgument);
  EXPECT_THROW(plan(g, "milp", 100, NAN), InvalidArgument);
}

TEST(PlannerTest, MilpAndLpRoundOverTheNodeCapAreAStatus) {
  StaticGraph big = model_graph("model:chain?depth=300");
  ASSERT_GT(big.size(), kMaxMilpNodes);
  for (const char* name : {"milp", "lp-round"}) {
    PlanResult r = plan(big, name, 1 << 30);
    EXPECT_EQ(r.status, PlanStatus::kTooLarge) << name;
    EXPECT_EQ(to_string(r.status), "too-large");
    EXPECT_NE(r.message.find("at most 400"), std::string::npos) << r.message;
    EXPECT_TRUE(r.schedule.steps.empty());
    EXPECT_TRUE(r.consistent());
  }
}

double wall_s(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// Building this chain's model (101 nodes) took 15 s, outside the limit, and
// CBC's root LP another 3 s. The bound is loose: the machine is shared.
TEST(PlannerTest, MilpTimeLimitBoundsTheWholeCall) {
  StaticGraph g = model_graph("model:chain?depth=50");
  std::int64_t budget = keep_all_peak(g) / 2;
  PlanResult revolve = plan(g, "revolve", budget);
  ASSERT_TRUE(fits(revolve)) << revolve.message;
  PlanResult r;
  EXPECT_LT(wall_s([&] { r = plan(g, "milp", budget, /*time_limit=*/1); }),
            10.0);
  // Cut short, the MILP still holds its start.
  ASSERT_TRUE(fits(r)) << to_string(r.status) << ": " << r.message;
  EXPECT_TRUE(r.consistent());
  EXPECT_LE(r.compute_ns, revolve.compute_ns);
  EXPECT_GE(r.gap, 0.0);
  EXPECT_LE(r.lower_bound_ns, static_cast<double>(r.compute_ns));
}

TEST(PlannerTest, LpRoundTimeLimitBoundsTheWholeCall) {
  StaticGraph g = model_graph("model:chain?depth=50");
  std::int64_t budget = keep_all_peak(g) / 2;
  PlanResult r;
  EXPECT_LT(wall_s([&] { r = plan(g, "lp-round", budget, /*time_limit=*/1); }),
            10.0);
  EXPECT_TRUE(r.consistent());
  if (r.status == PlanStatus::kTimeLimit) {
    EXPECT_NE(r.message.find("time limit"), std::string::npos) << r.message;
  }
}

// A limit that passes at once: checkpoint-all, the one start tried, does
// not fit, and the model is never complete: the status says so.
TEST(PlannerTest, MilpDeadlineWhileBuildingIsATimeLimitStatus) {
  StaticGraph g = model_graph("model:chain?depth=50");
  std::int64_t budget = keep_all_peak(g) / 8;
  PlanResult r;
  EXPECT_LT(wall_s([&] { r = plan(g, "milp", budget, /*time_limit=*/1e-6); }),
            10.0);
  EXPECT_EQ(r.status, PlanStatus::kTimeLimit) << r.message;
  EXPECT_NE(r.message.find("building the model"), std::string::npos)
      << r.message;
  EXPECT_TRUE(r.schedule.steps.empty());
}

TEST(PlannerTest, LpRoundThresholdsAreCheckmates) {
  EXPECT_EQ(lp_round_thresholds().size(), 9u);
  StaticGraph g = tiny_graph();
  std::int64_t full = keep_all_peak(g);
  PlanResult r = plan(g, "lp-round", full);
  ASSERT_TRUE(fits(r)) << r.message;
  EXPECT_TRUE(r.consistent());
  EXPECT_LE(r.lower_bound_ns, r.compute_ns);
}

}  // namespace
}  // namespace dtr::plan
