#include "dtr/report/fidelity.h"

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>

#include "dtr/core/error.h"
#include "dtr/sim/parallel.h"
#include "dtr/trace/trace_reader.h"

namespace dtr::report {

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::string_view trimmed(line);
  while (!trimmed.empty() &&
         (trimmed.back() == '\r' || trimmed.back() == '\n')) {
    trimmed.remove_suffix(1);
  }
  std::istringstream in{std::string(trimmed)};
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!trimmed.empty() && trimmed.back() == ',') out.push_back("");
  return out;
}

}  // namespace

std::vector<ReferenceRow> read_reference_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("[" + path + "] cannot open reference CSV");
  std::string line;
  if (!std::getline(in, line)) {
    throw InvalidArgument("[" + path + ":1] empty reference CSV");
  }
  std::vector<std::string> header = split_csv(line);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need :
       {"trace", "heuristic", "budget_ratio", "budget_bytes",
        "baseline_peak_bytes", "status", "overhead", "model_compute_ns",
        "remat_compute_ns", "evictions_heuristic", "evictions_eager",
        "peak_bytes", "trace_ops", "cpu_s"}) {
    if (!col.count(need)) {
      throw InvalidArgument("[" + path + ":1] missing column " + need);
    }
  }
  std::vector<ReferenceRow> rows;
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    std::vector<std::string> c = split_csv(line);
    auto get = [&](const char* name) -> const std::string& {
      std::size_t i = col[name];
      if (i >= c.size()) {
        throw InvalidArgument("[" + path + ":" + std::to_string(number) +
                              "] missing value for " + name);
      }
      return c[i];
    };
    auto num = [&](const char* name) -> double {
      const std::string& s = get(name);
      if (s.empty()) return 0;
      try {
        return std::stod(s);
      } catch (const std::exception&) {
        throw InvalidArgument("[" + path + ":" + std::to_string(number) + "] " +
                              name + " is not a number: '" + s + "'");
      }
    };
    // A whole number of bytes or ns that fits an int64 (the conversion of
    // anything else would be undefined behaviour).
    auto whole = [&](const char* name) -> std::int64_t {
      double v = num(name);
      if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
        throw InvalidArgument("[" + path + ":" + std::to_string(number) + "] " +
                              name + " does not fit in 64 bits: '" + get(name) +
                              "'");
      }
      return static_cast<std::int64_t>(v);
    };
    ReferenceRow r;
    r.trace = get("trace");
    r.heuristic = get("heuristic");
    r.budget_ratio = num("budget_ratio");
    r.budget_bytes = whole("budget_bytes");
    r.baseline_peak_bytes = whole("baseline_peak_bytes");
    r.status = get("status");
    r.overhead = num("overhead");
    r.model_compute_ns = whole("model_compute_ns");
    r.remat_compute_ns = whole("remat_compute_ns");
    r.evictions = whole("evictions_heuristic");
    r.eager_evictions = whole("evictions_eager");
    r.peak_bytes = whole("peak_bytes");
    r.trace_ops = whole("trace_ops");
    r.cpu_s = num("cpu_s");
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<FidelityCell> run_fidelity(const std::vector<ReferenceRow>& rows,
                                       const std::string& trace_dir,
                                       double tolerance, int threads,
                                       int repeats) {
  DTR_CHECK(repeats >= 1, "[fidelity] repeats must be at least 1, got ",
            repeats);
  // Parse each trace once and share it read-only between workers.
  struct Loaded {
    trace::Program program;
    sim::Baseline baseline;
  };
  std::map<std::string, std::unique_ptr<Loaded>> traces;
  for (const auto& r : rows) {
    if (traces.count(r.trace)) continue;
    auto l = std::make_unique<Loaded>();
    l->program = trace::read_trace_file(trace_dir + "/" + r.trace);
    l->baseline = sim::compute_baseline(l->program);
    traces[r.trace] = std::move(l);
  }
  std::vector<FidelityCell> cells(rows.size());
  sim::parallel_for(rows.size(), threads, [&](std::size_t i) {
    const ReferenceRow& ref = rows[i];
    const Loaded& l = *traces.at(ref.trace);
    sim::SimConfig config;
    config.heuristic = ref.heuristic;
    config.budget_ratio = ref.budget_ratio;
    FidelityCell& cell = cells[i];
    cell.reference = ref;
    cell.ours = sim::simulate(l.program, l.baseline, config);
    for (int k = 1; k < repeats; ++k) {
      const std::int64_t wall =
          sim::simulate(l.program, l.baseline, config).sim_wall_ns;
      cell.ours.sim_wall_ns = std::min(cell.ours.sim_wall_ns, wall);
    }
    cell.same_budget = cell.ours.budget_bytes == ref.budget_bytes;
    std::string ours(to_string(cell.ours.status));
    if (ours == "ok" && ref.status == "ok") {
      cell.overhead_diff =
          std::abs(cell.ours.overhead - ref.overhead) / ref.overhead;
      cell.agrees = cell.overhead_diff <= tolerance;
    } else {
      cell.agrees = ours == ref.status;
    }
  });
  return cells;
}

}  // namespace dtr::report
