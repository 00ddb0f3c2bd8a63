#include "dtr/sim/sweep.h"

#include <cmath>
#include <mutex>

#include "dtr/core/error.h"
#include "dtr/core/heuristic.h"
#include "dtr/sim/auto_choice.h"
#include "dtr/sim/parallel.h"
#include "dtr/sim/program_source.h"

namespace dtr::sim {

SweepOutput run_sweep(const SweepRequest& request,
                      const std::function<void(const SweepCell&, std::size_t,
                                               std::size_t)>& progress) {
  DTR_CHECK(!request.ratios.empty(), "[sweep] no budget ratios");
  DTR_CHECK(!request.heuristics.empty(), "[sweep] no heuristics");
  for (const auto& h : request.heuristics) check_heuristic_name(h);
  for (double r : request.ratios) {
    DTR_CHECK(r > 0 && std::isfinite(r),
              "[sweep] budget ratios must be positive finite numbers, got ", r);
  }
  DTR_CHECK(request.thrash_limit >= 1.0,
            "[sweep] thrash limit must be >= 1, got ", request.thrash_limit);
  DTR_CHECK(request.threads >= 1, "[sweep] threads must be >= 1, got ",
            request.threads);
  std::vector<std::string> specs = expand_program_specs(request.specs);

  // Parse (or build) every program and its baseline once, in parallel.
  std::vector<NamedProgram> programs(specs.size());
  std::vector<Baseline> baselines(specs.size());
  parallel_for(specs.size(), request.threads, [&](std::size_t i) {
    programs[i] = load_program(specs[i]);
    baselines[i] = compute_baseline(programs[i].program);
  });
  make_names_unique(programs, specs);
  // Every budget must exist before hours of simulation start.
  for (std::size_t p = 0; p < programs.size(); ++p) {
    for (double r : request.ratios) {
      try {
        budget_for_ratio(r, baselines[p].peak_bytes);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument("[sweep] " + programs[p].name + ": " + e.what());
      }
    }
  }

  struct Task {
    std::size_t program;
    std::string heuristic;
    double ratio;
  };
  std::vector<Task> tasks;
  for (std::size_t p = 0; p < programs.size(); ++p) {
    for (const auto& h : request.heuristics) {
      for (double r : request.ratios) tasks.push_back({p, h, r});
    }
  }
  SweepOutput out;
  out.request = request;
  out.request.specs = specs;
  for (std::size_t p = 0; p < programs.size(); ++p) {
    out.programs.push_back({programs[p].name, programs[p].program.trace_ops(),
                            std::move(programs[p].program), baselines[p]});
  }
  out.cells.resize(tasks.size());
  std::mutex mutex;
  std::size_t done = 0;
  parallel_for(tasks.size(), request.threads, [&](std::size_t i) {
    const Task& t = tasks[i];
    SimConfig config;
    config.heuristic = t.heuristic;
    config.policy = request.policy;
    config.budget_ratio = t.ratio;
    config.thrash_limit = request.thrash_limit;
    config.allocator = request.allocator;
    const SweepProgram& p = out.programs[t.program];
    SweepCell cell{p.name, simulate(p.program, p.baseline, config)};
    std::lock_guard<std::mutex> lock(mutex);
    out.cells[i] = std::move(cell);
    ++done;
    if (progress) progress(out.cells[i], done, tasks.size());
  });
  return out;
}

}  // namespace dtr::sim
