// `dtr plan TRACE --budget-ratio R --planner milp`: a static schedule for a
// trace, checked by executing it, optionally next to DTR's simulated runs at
// the same budget.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "dtr/cli/commands.h"
#include "dtr/cli/validators.h"
#include "dtr/core/error.h"
#include "dtr/plan/milp.h"
#include "dtr/plan/planner.h"
#include "dtr/plan/run_recording.h"
#include "dtr/plan/static_graph.h"
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"
#include "dtr/trace/utf8.h"

namespace dtr::cli {

namespace {
struct PlanOptions {
  std::string trace;
  std::optional<double> budget_ratio;
  std::optional<std::int64_t> budget_bytes;
  std::string planners = "milp";
  std::string heuristics;
  double time_limit_s = 60;
  double thrash_limit = std::numeric_limits<double>::infinity();
  bool json = false;
};

// One row of the result: a planner's schedule or a simulated DTR run.
struct Row {
  std::string name;
  std::string kind;  // "planner" or "dtr"
  std::string status;
  bool fits = false;  // a run or schedule within the budget
  std::int64_t compute_ns = 0;
  std::int64_t peak_bytes = 0;
  double overhead = 0;
  double gap = 0;
  double lower_bound_ns = 0;
  double solve_s = 0;
  std::string verdict;  // the validator's, for planners
  std::string message;
};

nlohmann::json row_to_json(const Row& r) {
  nlohmann::json j{{"name", r.name},
                   {"kind", r.kind},
                   {"status", r.status},
                   {"fits", r.fits},
                   {"compute_ns", r.compute_ns},
                   {"peak_bytes", r.peak_bytes},
                   {"overhead", r.overhead},
                   {"message", r.message}};
  if (r.kind == "planner") {
    j["gap"] = r.gap;
    j["lower_bound_ns"] = r.lower_bound_ns;
    j["solve_s"] = r.solve_s;
    j["verdict"] = r.verdict;
  }
  return j;
}

Row planner_row(const plan::PlanResult& p, std::int64_t baseline_ns) {
  Row r;
  r.name = p.planner;
  r.kind = "planner";
  r.status = std::string(plan::to_string(p.status));
  r.fits = p.status == plan::PlanStatus::kOptimal ||
           p.status == plan::PlanStatus::kFeasible;
  r.compute_ns = p.compute_ns;
  r.peak_bytes = p.peak_bytes;
  r.overhead = baseline_ns > 0 && !p.schedule.steps.empty()
                   ? double(p.compute_ns) / double(baseline_ns)
                   : 0;
  r.gap = p.gap;
  r.lower_bound_ns = p.lower_bound_ns;
  r.solve_s = p.solve_s;
  if (p.schedule.steps.empty()) {
    r.verdict = "no schedule";
  } else if (p.validation.ok && p.runtime.ok) {
    r.verdict = "valid";
  } else {
    r.verdict = "rejected: " +
                (p.validation.ok ? p.runtime.problem : p.validation.problem);
  }
  r.message = p.message;
  return r;
}

// Whether the MILP runs on `g`: then DTR's runs are recorded as its starts.
bool wants_starts(const std::vector<std::string>& planners,
                  const plan::StaticGraph& g) {
  return g.size() <= plan::kMaxMilpNodes &&
         std::find(planners.begin(), planners.end(), "milp") != planners.end();
}

// One simulated run at the budget; with `recorder`, recorded.
sim::SimResult simulate_at(const trace::Program& program,
                           const sim::Baseline& baseline,
                           const std::string& heuristic, std::int64_t budget,
                           double thrash_limit, plan::RunRecorder* recorder) {
  sim::SimConfig config;
  config.heuristic = heuristic;
  config.budget_bytes = budget;
  config.thrash_limit = thrash_limit;
  config.observer = recorder;
  return sim::simulate(program, baseline, config);
}

// Simulates each heuristic at the budget; with `starts`, every run that
// trains is recorded as a plan (auto's as the run of the heuristic it
// chose, simulated again).
std::vector<Row> simulate_heuristics(const trace::Program& program,
                                     const sim::Baseline& baseline,
                                     const plan::StaticGraph& g,
                                     const std::vector<std::string>& heuristics,
                                     std::int64_t budget, double thrash_limit,
                                     std::vector<plan::NamedPlan>* starts) {
  std::vector<Row> rows;
  for (const std::string& h : heuristics) {
    plan::RunRecorder recorder(program, g);
    const bool record = starts != nullptr;
    const bool direct = record && h != "auto";
    sim::SimResult s = simulate_at(program, baseline, h, budget, thrash_limit,
                                   direct ? &recorder : nullptr);
    Row r;
    r.name = h;
    r.kind = "dtr";
    r.status = std::string(sim::to_string(s.status));
    r.fits = s.status == sim::SimStatus::kOk;
    r.compute_ns = s.model_compute_ns + s.remat_compute_ns;
    r.peak_bytes = s.peak_bytes;
    r.overhead = s.overhead;
    r.message = s.message;
    rows.push_back(r);
    if (record && r.fits && !direct) {
      simulate_at(program, baseline, s.chosen, budget, thrash_limit, &recorder);
    }
    if (record && r.fits && recorder.complete()) {
      starts->push_back({"dtr run '" + h + "'", recorder.plan()});
    }
  }
  return rows;
}

// The MILP's proven lower bound on compute (0: none): it bounds every plan
// in the stage form of its start, DTR's recorded runs included. lp-round's
// bounds only frontier-advancing plans, which DTR's runs need not be.
double best_bound(const std::vector<Row>& rows) {
  double bound = 0;
  for (const Row& r : rows) {
    if (r.name == "milp") bound = std::max(bound, r.lower_bound_ns);
  }
  return bound;
}

// "DTR is at most X x the optimum": each DTR run that trains against the
// bound.
void print_bound(const std::vector<Row>& rows, double bound) {
  if (bound <= 0) return;
  std::printf("lower bound on compute: %.3f ms\n", bound / 1e6);
  for (const Row& r : rows) {
    if (r.kind != "dtr" || !r.fits) continue;
    std::printf("%s is at most %.3fx the optimum\n", r.name.c_str(),
                r.compute_ns / bound);
  }
}

// Note [plan exit status]: decided after every row is printed, so that one
// planner's failure never hides the others' results. A schedule that fails
// its checks is a bug in dtr: exit 1 naming it. Otherwise, like `dtr sim`,
// exit 2 when no row (planner or DTR run) fits the budget, whatever the
// reason (infeasible, time-limit, over-budget, unsupported, too-large), and
// 0 when at least one does.
void check_plan_outcome(const std::vector<Row>& rows,
                        const std::vector<std::string>& rejected,
                        std::int64_t budget) {
  if (!rejected.empty()) {
    std::string what;
    for (const std::string& r : rejected)
      what += (what.empty() ? "" : "; ") + r;
    throw InternalError(
        "[plan] a planner returned a schedule that fails "
        "validation: " +
        what);
  }
  for (const Row& r : rows) {
    if (r.fits) return;
  }
  if (rows.size() == 1) {
    throw RunFailed("[plan] " + rows[0].name + ": status " + rows[0].status +
                    " at budget " + std::to_string(budget) + " bytes" +
                    (rows[0].message.empty() ? "" : ": " + rows[0].message));
  }
  throw RunFailed("[plan] nothing fits the budget of " +
                  std::to_string(budget) + " bytes (" +
                  std::to_string(rows.size()) + " rows, statuses above)");
}

// The rows as one JSON object on stdout (--json).
void print_json(const sim::NamedProgram& p, const plan::StaticGraph& g,
                const sim::Baseline& baseline, std::int64_t budget,
                const PlanOptions& o, const std::vector<Row>& rows,
                double bound) {
  nlohmann::json results = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json j = row_to_json(r);
    if (r.kind == "dtr" && r.fits && bound > 0) {
      j["ratio_to_bound"] = r.compute_ns / bound;
    }
    results.push_back(j);
  }
  nlohmann::json j{{"trace", trace::valid_utf8(p.name)},
                   {"nodes", g.size()},
                   {"budget_bytes", budget},
                   {"baseline_peak_bytes", baseline.peak_bytes},
                   {"baseline_compute_ns", g.baseline_cost_ns()},
                   {"constant_bytes", g.constant_bytes},
                   {"time_limit_s", o.time_limit_s},
                   {"lower_bound_ns", bound},
                   {"results", results}};
  std::cout << j.dump() << "\n";
}

// The rows as a table on stdout.
void print_table(const sim::NamedProgram& p, const plan::StaticGraph& g,
                 const sim::Baseline& baseline, std::int64_t budget,
                 const std::vector<Row>& rows, double bound) {
  std::printf(
      "trace %s: %zu nodes, %zu trace ops\n"
      "budget %lld bytes = %.3f x baseline peak %lld (constants %lld)\n"
      "baseline compute %.3f ms\n",
      p.name.c_str(), g.size(), p.program.trace_ops(), (long long)budget,
      baseline.peak_bytes > 0 ? double(budget) / baseline.peak_bytes : 0.0,
      (long long)baseline.peak_bytes, (long long)g.constant_bytes,
      g.baseline_cost_ns() / 1e6);
  std::printf("%-15s %-8s %-12s %9s %14s %8s %8s  %s\n", "name", "kind",
              "status", "overhead", "peak_bytes", "gap", "solve_s", "verdict");
  for (const Row& r : rows) {
    std::string overhead =
        r.overhead > 0 ? std::to_string(r.overhead).substr(0, 6) : "-";
    std::string gap = r.kind == "planner" && r.fits
                          ? std::to_string(r.gap * 100).substr(0, 5) + "%"
                          : "-";
    std::string solve =
        r.kind == "planner" ? std::to_string(r.solve_s).substr(0, 6) : "-";
    std::printf("%-15s %-8s %-12s %9s %14lld %8s %8s  %s\n", r.name.c_str(),
                r.kind.c_str(), r.status.c_str(), overhead.c_str(),
                (long long)r.peak_bytes, gap.c_str(), solve.c_str(),
                r.kind == "planner" ? r.verdict.c_str() : "-");
    if (!r.message.empty() && !r.fits) {
      std::printf("  %s: %s\n", r.name.c_str(), r.message.c_str());
    }
  }
  print_bound(rows, bound);
}

void run_plan(const PlanOptions& o) {
  if (!o.budget_ratio && !o.budget_bytes) {
    throw InvalidArgument("give --budget-ratio or --budget-bytes");
  }
  std::vector<std::string> planners = parse_planner_list(o.planners);
  std::vector<std::string> heuristics;
  if (!o.heuristics.empty()) heuristics = parse_heuristic_list(o.heuristics);
  sim::NamedProgram p = sim::load_program(o.trace);
  sim::Baseline baseline = sim::compute_baseline(p.program);
  std::int64_t budget =
      o.budget_bytes
          ? *o.budget_bytes
          : sim::budget_for_ratio(*o.budget_ratio, baseline.peak_bytes);
  plan::StaticGraph g = plan::build_static_graph(p.program);

  // The MILP starts from DTR's runs: exact dtr's where none is asked for.
  std::vector<plan::NamedPlan> starts;
  const bool record = wants_starts(planners, g);
  std::vector<Row> dtr_rows = simulate_heuristics(
      p.program, baseline, g,
      heuristics.empty() && record ? std::vector<std::string>{"dtr"}
                                   : heuristics,
      budget, o.thrash_limit, record ? &starts : nullptr);
  if (heuristics.empty()) dtr_rows.clear();
  std::vector<Row> rows;
  std::vector<std::string> rejected;  // planners whose schedule failed a check
  for (const std::string& name : planners) {
    plan::PlanResult r = plan::run_planner(g, {.planner = name,
                                               .budget_bytes = budget,
                                               .time_limit_s = o.time_limit_s,
                                               .starts = &starts});
    // Note [plan validation]: a schedule the planner claims fits but that
    // does not execute within the budget is a bug in dtr, never a result.
    // It is reported after every other row is shown.
    if (!r.consistent()) {
      rejected.push_back(
          name + ": " +
          (r.validation.ok ? r.runtime.problem : r.validation.problem));
    }
    rows.push_back(planner_row(r, g.baseline_cost_ns()));
  }
  rows.insert(rows.end(), dtr_rows.begin(), dtr_rows.end());

  const double bound = best_bound(rows);
  if (o.json) {
    print_json(p, g, baseline, budget, o, rows, bound);
  } else {
    print_table(p, g, baseline, budget, rows, bound);
  }
  check_plan_outcome(rows, rejected, budget);
}
}  // namespace

void add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Plan a static rematerialization schedule for a trace (Checkmate MILP, "
      "LP rounding, Chen, Revolve, checkpoint-all) and check it by executing "
      "it; compare with DTR's simulated runs at the same budget");
  sub->footer(
      "exit status (every row is printed first): 0 at least one planner or "
      "heuristic fits the budget; 2 none does (statuses infeasible, "
      "time-limit, over-budget, unsupported, too-large, oom); 1 bad input, "
      "or a schedule that fails its checks (a bug in dtr)");
  sub->add_option("trace", o->trace,
                  "trace file, or model:NAME[?batch=..&depth=..&seed=..]")
      ->required();
  add_budget_options(
      sub, o->budget_ratio, o->budget_bytes,
      "budget as a fraction of the baseline peak (as in dtr sim)");
  sub->add_option("--planner", o->planners,
                  "milp, lp-round, chen-sqrtn, chen-greedy, revolve, "
                  "checkpoint-all, a comma list, or all (default milp)");
  sub->add_option("--heuristics", o->heuristics,
                  "also simulate these DTR heuristics at the same budget "
                  "(comma list or all)");
  sub->add_option("--time-limit", o->time_limit_s,
                  "wall-clock seconds for each milp and lp-round call, model "
                  "building included (default 60)")
      ->check(real_in(0, 1e9, /*min_exclusive=*/true));
  sub->add_option("--thrash-limit", o->thrash_limit,
                  "give a DTR run up at this overhead, >= 1 (default inf: "
                  "never, so its compute can be compared)");
  sub->add_flag("--json", o->json, "print one JSON object");
  sub->callback([o] { run_plan(*o); });
}

}  // namespace dtr::cli
