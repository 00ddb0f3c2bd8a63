#pragma once
/// Overhead-versus-budget plots in the layout of the paper's Figure 2: one
/// line per heuristic, x = budget ratio, y = compute overhead; shaded: the
/// share of the baseline peak taken by constants, and beside it the largest
/// single op's working set (no budget below both can work). Drawn by gnuplot
/// (Debian's gnuplot-nox), which the sweep runs on a generated script.
#include <string>
#include <vector>

#include "dtr/sim/simulator.h"

namespace dtr::report {

struct PlotRequest {
  std::string title;
  std::string png_path;
  double thrash_limit = 2.0;
  std::vector<sim::SimResult>
      results;  ///< any order; failed runs are not drawn
};

/// Writes PNG_PATH plus the .dat and .gp files beside it and runs gnuplot.
/// Returns false (and fills `error`) if gnuplot is not installed; the data
/// files are written either way. Throws dtr::Error if a file cannot be
/// written or gnuplot runs but does not produce the PNG.
bool plot_overhead_curves(const PlotRequest& request, std::string* error);

}  // namespace dtr::report
