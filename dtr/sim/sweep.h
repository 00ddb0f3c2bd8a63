#pragma once
/// Runs the simulator over a grid of traces x heuristics x budget ratios on
/// several threads, writes DIR/results.csv and one plot per trace.
#include <functional>
#include <string>
#include <vector>

#include "dtr/sim/simulator.h"

namespace dtr::sim {

struct SweepRequest {
  std::vector<std::string> specs;       ///< see expand_program_specs
  std::vector<double> ratios;
  std::vector<std::string> heuristics;
  DeallocPolicy policy = DeallocPolicy::kEager;
  double thrash_limit = 2.0;
  int threads = 1;                      ///< >= 1
  std::string out_dir;                  ///< empty: write nothing
  bool plots = true;
};

struct SweepCell {
  std::string trace;
  SimResult result;
};

struct SweepOutput {
  std::vector<SweepCell> cells;         ///< in grid order
  std::vector<std::string> files;       ///< what was written
  std::vector<std::string> warnings;    ///< e.g. gnuplot is not installed
};

/// `progress` (optional) is called under a lock after each cell. Throws
/// dtr::InvalidArgument for a bad request (including a ratio whose budget
/// does not fit in an int64 on some trace) and dtr::Error if results.csv or
/// a plot cannot be written; a missing gnuplot is only a warning. The cells
/// and files do not depend on `threads` (except the sim_wall_ns column).
SweepOutput run_sweep(
    const SweepRequest& request,
    const std::function<void(const SweepCell&, std::size_t done,
                             std::size_t total)>& progress = {});

}  // namespace dtr::sim
