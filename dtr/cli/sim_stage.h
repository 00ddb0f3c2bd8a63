#pragma once
/// `dtr sim TRACE --stage`: the trace online (every step recorded), then
/// replayed from those records with no heuristic search, and, for a trace
/// of several steps, as a training loop (each step staged from the one
/// before). Prints the three side by side; see docs/planners.md "Staging".
#include "dtr/sim/program_source.h"
#include "dtr/sim/simulator.h"

namespace dtr::cli {

/// Runs and prints; throws RunFailed (exit 2) if the online run did not
/// train, or if the staged replay departs from it (compute, peak or a
/// search): that would be a bug.
void run_sim_staged(const sim::NamedProgram& p, const sim::Baseline& baseline,
                    sim::SimConfig config, bool json);

}  // namespace dtr::cli
