#include "dtr/sim/auto_choice.h"

#include <chrono>

#include "dtr/core/error.h"
#include "dtr/core/heuristic.h"
#include "dtr/sim/parallel.h"

namespace dtr::sim {

std::vector<std::string> auto_candidates() {
  return heuristic_names(/*auto_only=*/true);
}

void check_heuristic_name(std::string_view name) {
  if (name != kAutoHeuristic) make_heuristic(name);  // throws if unknown
}

std::size_t best_run(const std::vector<SimResult>& runs) {
  std::size_t best = 0;
  bool found = false;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const SimResult& r = runs[i];
    if (r.status != SimStatus::kOk) continue;
    // Model compute is the same in every run: the total orders by remat.
    if (!found || r.remat_compute_ns < runs[best].remat_compute_ns) {
      best = i;
      found = true;
    }
  }
  return best;
}

SimResult simulate_auto(const trace::Program& program, const Baseline& baseline,
                        const SimConfig& config, int threads) {
  DTR_CHECK(threads >= 1, "[sim] auto: threads must be >= 1, got ", threads);
  const auto& names = auto_candidates();
  std::vector<SimResult> runs(names.size());
  auto start = std::chrono::steady_clock::now();
  parallel_for(names.size(), threads, [&](std::size_t i) {
    SimConfig c = config;
    c.heuristic = names[i];
    c.observer = nullptr;  // one observer cannot follow parallel runs
    runs[i] = simulate(program, baseline, c);
  });
  const std::size_t best = best_run(runs);
  if (config.observer != nullptr) {
    // The observer (a profile) sees the chosen run, replayed alone: runs
    // are deterministic, so it is the same run.
    SimConfig c = config;
    c.heuristic = names[best];
    runs[best] = simulate(program, baseline, c);
  }
  SimResult r = runs[best];
  r.heuristic = std::string(kAutoHeuristic);
  if (r.status == SimStatus::kOk) {
    r.chosen = names[best];
  } else {
    r.message =
        "auto: every heuristic failed; " + names[best] + ": " + r.message;
  }
  r.sim_wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return r;
}

}  // namespace dtr::sim
