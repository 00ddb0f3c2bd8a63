#pragma once
/// Writes what a sweep (dtr/sim/sweep.h) computed: DIR/results.csv (the
/// columns of result_table.h) and, optionally, one overhead-versus-budget
/// plot per program (plot.h).
///
///   sim::SweepOutput out = sim::run_sweep(request);
///   report::SweepFiles files = report::write_sweep(out, "out/sweep");
#include <string>
#include <vector>

#include "dtr/sim/sweep.h"

namespace dtr::report {

struct SweepFiles {
  std::vector<std::string> files;     ///< what was written
  std::vector<std::string> warnings;  ///< e.g. gnuplot is not installed
};

/// Creates `dir` if needed and writes the results there. Throws dtr::Error
/// if the directory, results.csv or a plot cannot be written; a missing
/// gnuplot is only a warning.
SweepFiles write_sweep(const sim::SweepOutput& out, const std::string& dir,
                       bool plots = true);

}  // namespace dtr::report
