#include "dtr/cli/sweep_planners.h"

#include <cstdio>
#include <set>

#include "dtr/plan/planner.h"
#include "dtr/plan/static_graph.h"
#include "dtr/sim/simulator.h"

namespace dtr::cli {

namespace {

// The planner's status and why; a schedule that fails its checks (a bug in
// dtr) says so rather than passing for a plain failure.
std::string cell_message(const plan::PlanResult& p) {
  std::string status(plan::to_string(p.status));
  if (!p.consistent()) {
    return status + ", rejected by the checks: " +
           (p.validation.ok ? p.runtime.problem : p.validation.problem);
  }
  return status + (p.message.empty() ? "" : ": " + p.message);
}

// A planner that cannot take a graph says so once per trace, on stderr:
// results.csv records the cells (status oom) but has no column for why.
void note_skipped(const std::string& trace, const plan::PlanResult& p) {
  if (p.status != plan::PlanStatus::kTooLarge &&
      p.status != plan::PlanStatus::kUnsupported) {
    return;
  }
  std::fprintf(stderr, "note: %s on %s: %s\n",
               planner_cell_name(p.planner).c_str(), trace.c_str(),
               cell_message(p).c_str());
}

sim::SimResult as_sim_result(const plan::PlanResult& p, double ratio,
                             const sim::Baseline& baseline,
                             std::int64_t baseline_cost_ns) {
  sim::SimResult r;
  r.heuristic = planner_cell_name(p.planner);
  r.budget_ratio = ratio;
  r.budget_bytes = p.budget_bytes;
  r.baseline = baseline;
  const bool fits = (p.status == plan::PlanStatus::kOptimal ||
                     p.status == plan::PlanStatus::kFeasible) &&
                    !p.schedule.steps.empty() && p.consistent();
  r.status = fits ? sim::SimStatus::kOk : sim::SimStatus::kOom;
  r.message = cell_message(p);
  if (fits) {
    r.model_compute_ns = baseline_cost_ns;
    r.remat_compute_ns = p.compute_ns - baseline_cost_ns;
    r.overhead = baseline_cost_ns > 0
                     ? double(p.compute_ns) / double(baseline_cost_ns)
                     : 1.0;
    r.peak_bytes = p.peak_bytes;
    r.reserved_peak_bytes = p.peak_bytes;  // planners assume a perfect one
  }
  r.sim_wall_ns = static_cast<std::int64_t>(p.solve_s * 1e9);
  return r;
}

}  // namespace

std::string planner_cell_name(const std::string& planner) {
  return "plan:" + planner;
}

void add_planner_cells(sim::SweepOutput& out,
                       const std::vector<std::string>& planners,
                       double time_limit_s) {
  for (const auto& name : planners) plan::check_planner_name(name);
  for (const sim::SweepProgram& program : out.programs) {
    const sim::Baseline& baseline = program.baseline;
    const plan::StaticGraph g = plan::build_static_graph(program.program);
    const std::string& trace = program.name;
    std::set<std::string> noted;
    for (double ratio : out.request.ratios) {
      const std::int64_t budget =
          sim::budget_for_ratio(ratio, baseline.peak_bytes);
      for (const auto& name : planners) {
        const plan::PlanResult r =
            plan::run_planner(g, {.planner = name,
                                  .budget_bytes = budget,
                                  .time_limit_s = time_limit_s});
        if (noted.insert(name).second) note_skipped(trace, r);
        out.cells.push_back(
            {trace, as_sim_result(r, ratio, baseline, g.baseline_cost_ns())});
      }
    }
  }
}

}  // namespace dtr::cli
