#pragma once
// `dtr sweep --planners`: static planners beside the heuristics, at the
// same budgets, as cells of the same sweep, so that results.csv and the
// plots (the layout of the paper's Figure 3) show them together.
#include <string>
#include <vector>

#include "dtr/sim/sweep.h"

namespace dtr::cli {

/// The cell name of a planner's runs: "plan:NAME" (heuristics have no ':').
std::string planner_cell_name(const std::string& planner);

/// Appends, for each program of `out` and each of its ratios, one cell per
/// planner named planner_cell_name(): status ok when the planner returned a
/// schedule within the budget that both checks accept, else oom with the
/// planner's status in the message (too-large, unsupported, time-limit,
/// ...); overhead is the schedule's compute over the graph's baseline
/// compute. Every cell is recorded: a planner that cannot take a graph
/// (too-large, unsupported) is noted once per trace on stderr and the sweep
/// goes on. Planners run one at a time; `time_limit_s` bounds each milp and
/// lp-round call, model included. Throws dtr::InvalidArgument for an unknown
/// planner before running anything.
void add_planner_cells(sim::SweepOutput& out,
                       const std::vector<std::string>& planners,
                       double time_limit_s);

}  // namespace dtr::cli
