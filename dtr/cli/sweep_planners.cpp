#include "dtr/cli/sweep_planners.h"

#include "dtr/plan/planner.h"
#include "dtr/plan/static_graph.h"
#include "dtr/sim/simulator.h"

namespace dtr::cli {

namespace {

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
  r.message = std::string(plan::to_string(p.status)) +
              (p.message.empty() ? "" : ": " + p.message);
  if (fits) {
    r.model_compute_ns = baseline_cost_ns;
    r.remat_compute_ns = p.compute_ns - baseline_cost_ns;
    r.overhead = baseline_cost_ns > 0
                     ? double(p.compute_ns) / double(baseline_cost_ns)
                     : 1.0;
    r.peak_bytes = p.peak_bytes;
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
    for (double ratio : out.request.ratios) {
      const std::int64_t budget =
          sim::budget_for_ratio(ratio, baseline.peak_bytes);
      for (const auto& name : planners) {
        const plan::PlanResult r =
            plan::run_planner(g, {.planner = name,
                                  .budget_bytes = budget,
                                  .time_limit_s = time_limit_s});
        out.cells.push_back(
            {trace, as_sim_result(r, ratio, baseline, g.baseline_cost_ns())});
      }
    }
  }
}

}  // namespace dtr::cli
