#pragma once
/// Runs the simulator over a grid of traces x heuristics x budget ratios on
/// several threads. Writing the results (results.csv, plots) is
/// dtr/report/sweep_report.h.
#include <functional>
#include <string>
#include <vector>

#include "dtr/sim/simulator.h"

namespace dtr::sim {

struct SweepRequest {
  std::vector<std::string> specs;  ///< see expand_program_specs
  std::vector<double> ratios;
  std::vector<std::string> heuristics;
  DeallocPolicy policy = DeallocPolicy::kEager;
  double thrash_limit = 2.0;
  AllocatorKind allocator = AllocatorKind::kPerfect;
  int threads = 1;  ///< >= 1
};

struct SweepCell {
  std::string trace;
  SimResult result;
};

/// One program of the grid, kept after the sweep so that later stages (the
/// planners' cells, reports) need not parse or replay it again.
struct SweepProgram {
  std::string name;  ///< as in SweepCell::trace
  std::size_t trace_ops = 0;
  trace::Program program;
  Baseline baseline;
};

struct SweepOutput {
  std::vector<SweepCell> cells;        ///< in grid order
  std::vector<SweepProgram> programs;  ///< in the order of the specs
  SweepRequest request;                ///< what was run (specs expanded)
};

/// `progress` (optional) is called under a lock after each cell. Throws
/// dtr::InvalidArgument for a bad request (including a ratio whose budget
/// does not fit in an int64 on some trace) and dtr::Error if a program
/// cannot be loaded. The cells do not depend on `threads` (except their
/// sim_wall_ns).
SweepOutput run_sweep(
    const SweepRequest& request,
    const std::function<void(const SweepCell&, std::size_t done,
                             std::size_t total)>& progress = {});

}  // namespace dtr::sim
