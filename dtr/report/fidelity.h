#pragma once
/// Compares our simulator with the authors' (a reference CSV, see
/// ../shared/reference/README.md): same trace, heuristic and budget; the
/// cell agrees when the outcome is the same and, where both succeed, the
/// overhead is within the tolerance.
#include <string>
#include <vector>

#include "dtr/sim/simulator.h"

namespace dtr::report {

struct ReferenceRow {
  std::string trace;      ///< log file name
  std::string heuristic;  ///< dtr's name
  double budget_ratio = 0;
  std::int64_t budget_bytes = 0;
  std::int64_t baseline_peak_bytes = 0;
  std::string status;   ///< ok / oom / thrash / timeout
  double overhead = 0;  ///< valid when status == ok
  std::int64_t model_compute_ns = 0, remat_compute_ns = 0;
  std::int64_t evictions = 0, eager_evictions = 0, peak_bytes = 0;
  std::int64_t trace_ops = 0;
  double cpu_s = 0;
};

/// Reads the reference CSV; throws dtr::Error with file:line on bad input.
std::vector<ReferenceRow> read_reference_csv(const std::string& path);

struct FidelityCell {
  ReferenceRow reference;
  sim::SimResult ours;
  bool same_budget = false;
  bool agrees = false;       ///< same outcome, overhead within tolerance
  double overhead_diff = 0;  ///< relative, when both ok
};

/// Runs each reference row's configuration on the trace found in
/// `trace_dir` (rows with status timeout are compared on outcome only if we
/// finish). Uses `threads` worker threads. Each cell is simulated `repeats`
/// times and the fastest run kept (the outcome never changes).
std::vector<FidelityCell> run_fidelity(const std::vector<ReferenceRow>& rows,
                                       const std::string& trace_dir,
                                       double tolerance, int threads,
                                       int repeats = 1);

}  // namespace dtr::report
