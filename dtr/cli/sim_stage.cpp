#include "dtr/cli/sim_stage.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "dtr/cli/commands.h"
#include "dtr/report/result_table.h"

namespace dtr::cli {

namespace {

nlohmann::json staged_json(const std::string& trace, const sim::SimResult& r) {
  nlohmann::json j = report::result_to_json(trace, r);
  j["eviction_searches"] = r.eviction_searches;
  j["steps"] = r.staging.steps;
  j["staged_steps"] = r.staging.staged_steps;
  j["diverged_steps"] = r.staging.diverged_steps;
  j["planned_evictions"] = r.staging.planned_evictions;
  return j;
}

void print_row(const char* what, const sim::SimResult& r) {
  std::printf(
      "%-7s status %s, compute %lld ns (remat %lld), peak %lld bytes, "
      "%llu evictions (%llu planned), %llu searches, steps %llu: %llu staged, "
      "%llu diverged, %.3f ms\n",
      what, std::string(sim::to_string(r.status)).c_str(),
      (long long)(r.model_compute_ns + r.remat_compute_ns),
      (long long)r.remat_compute_ns, (long long)r.peak_bytes,
      (unsigned long long)r.evictions,
      (unsigned long long)r.staging.planned_evictions,
      (unsigned long long)r.eviction_searches,
      (unsigned long long)r.staging.steps,
      (unsigned long long)r.staging.staged_steps,
      (unsigned long long)r.staging.diverged_steps, r.sim_wall_ns / 1e6);
}

bool same_run(const sim::SimResult& a, const sim::SimResult& b) {
  return a.status == b.status && a.model_compute_ns == b.model_compute_ns &&
         a.remat_compute_ns == b.remat_compute_ns &&
         a.peak_bytes == b.peak_bytes && a.evictions == b.evictions &&
         b.eviction_searches == 0;
}

}  // namespace

void run_sim_staged(const sim::NamedProgram& p, const sim::Baseline& baseline,
                    sim::SimConfig config, bool json) {
  config.stage = sim::SimConfig::StageMode::kRecord;
  const sim::SimResult online = sim::simulate(p.program, baseline, config);
  config.plans = &online.captured;
  const sim::SimResult staged = sim::simulate(p.program, baseline, config);
  config.plans = nullptr;
  config.stage = sim::SimConfig::StageMode::kLoop;
  const bool loop = online.staging.steps > 1;
  sim::SimResult looped;
  if (loop) looped = sim::simulate(p.program, baseline, config);

  if (json) {
    nlohmann::json j{{"online", staged_json(p.name, online)},
                     {"staged", staged_json(p.name, staged)}};
    if (loop) j["loop"] = staged_json(p.name, looped);
    std::cout << j.dump() << "\n";
  } else {
    std::printf(
        "trace %s (%zu ops, %zu marked steps)\nheuristic %s, budget "
        "%lld bytes = %.3f x baseline peak %lld\n",
        p.name.c_str(), p.program.trace_ops(), p.program.step_starts.size(),
        online.heuristic.c_str(), (long long)online.budget_bytes,
        online.budget_ratio, (long long)baseline.peak_bytes);
    print_row("online", online);
    print_row("staged", staged);
    if (loop) print_row("loop", looped);
  }
  if (online.status != sim::SimStatus::kOk) {
    throw RunFailed("[sim] status " +
                    std::string(sim::to_string(online.status)) + " at budget " +
                    std::to_string(online.budget_bytes) +
                    " bytes: " + online.message);
  }
  if (!same_run(online, staged)) {
    throw RunFailed(
        "[sim] --stage: the staged replay departs from the online run "
        "(compute, peak, evictions or searches differ)");
  }
}

}  // namespace dtr::cli
