#pragma once
/// `auto`: the run of the best fixed heuristic. Simulates the program under
/// each of auto_candidates() at the same budget and reports the run with the
/// lowest total compute (model + remat); ties go to the earlier candidate
/// (the paper's order); a run that fails (oom, thrash) never wins, and if
/// every run fails, auto fails with the first candidate's run.
///
///   sim::SimConfig c{.heuristic = "auto", .budget_ratio = 0.4};
///   sim::SimResult r = sim::simulate(program, baseline, c);
///   // r.heuristic == "auto", r.chosen == "msps" (say)
#include <string>
#include <string_view>
#include <vector>

#include "dtr/sim/simulator.h"

namespace dtr::sim {

/// The name a user types for the choice.
inline constexpr std::string_view kAutoHeuristic = "auto";

/// The fixed heuristics auto chooses among: the registered ones whose
/// auto_candidate is set (heuristic_registry.h), in registration order:
/// dtr, dtr-eq, dtr-local, msps, lru, size, then any registered later.
std::vector<std::string> auto_candidates();

/// Throws dtr::InvalidArgument unless `name` is a core heuristic or auto.
void check_heuristic_name(std::string_view name);

/// The index in `runs` (one per auto_candidates(), same order) of the run
/// auto reports: the cheapest that trained, else 0.
std::size_t best_run(const std::vector<SimResult>& runs);

/// simulate() with config.heuristic == "auto": the candidates run on
/// `threads` threads (>= 1); the result is the chosen run, renamed "auto",
/// with `chosen` naming the winner (empty if all failed) and sim_wall_ns the
/// wall time of all runs (the price of the choice).
SimResult simulate_auto(const trace::Program& program, const Baseline& baseline,
                        const SimConfig& config, int threads = 1);

}  // namespace dtr::sim
