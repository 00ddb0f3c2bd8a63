#include "dtr/report/result_table.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "dtr/trace/utf8.h"

namespace dtr::report {

const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> columns = {"trace",
                                                   "heuristic",
                                                   "policy",
                                                   "budget_ratio",
                                                   "budget_bytes",
                                                   "baseline_peak_bytes",
                                                   "baseline_compute_ns",
                                                   "baseline_constant_bytes",
                                                   "baseline_bottleneck_bytes",
                                                   "model_compute_ns",
                                                   "remat_compute_ns",
                                                   "overhead",
                                                   "peak_bytes",
                                                   "evictions",
                                                   "eager_evictions",
                                                   "banishments",
                                                   "remats",
                                                   "metadata_accesses",
                                                   "status",
                                                   "trace_ops",
                                                   "sim_wall_ns",
                                                   "chosen",
                                                   "allocator",
                                                   "live_peak_bytes",
                                                   "reserved_peak_bytes",
                                                   "fragmentation",
                                                   "allocator_ooms",
                                                   "first_allocator_oom_ns"};
  return columns;
}

nlohmann::json result_to_json(const std::string& trace,
                              const sim::SimResult& r) {
  nlohmann::ordered_json j;
  j["trace"] = dtr::trace::valid_utf8(trace);  // JSON holds only UTF-8
  j["heuristic"] = r.heuristic;
  j["policy"] = std::string(to_string(r.policy));
  j["budget_ratio"] = r.budget_ratio;
  j["budget_bytes"] = r.budget_bytes;
  j["baseline_peak_bytes"] = r.baseline.peak_bytes;
  j["baseline_compute_ns"] = r.baseline.compute_ns;
  j["baseline_constant_bytes"] = r.baseline.constant_bytes;
  j["baseline_bottleneck_bytes"] = r.baseline.bottleneck_bytes;
  j["model_compute_ns"] = r.model_compute_ns;
  j["remat_compute_ns"] = r.remat_compute_ns;
  j["overhead"] = r.overhead;
  j["peak_bytes"] = r.peak_bytes;
  j["evictions"] = r.evictions;
  j["eager_evictions"] = r.eager_evictions;
  j["banishments"] = r.banishments;
  j["remats"] = r.remats;
  j["metadata_accesses"] = r.metadata_accesses;
  j["status"] = std::string(to_string(r.status));
  j["trace_ops"] = r.trace_ops;
  j["sim_wall_ns"] = r.sim_wall_ns;
  j["chosen"] = r.chosen;  // auto's pick; empty for a fixed heuristic
  j["allocator"] = std::string(sim::to_string(r.allocator));
  j["live_peak_bytes"] = r.peak_bytes;  // peak_bytes, named beside reserved
  j["reserved_peak_bytes"] = r.reserved_peak_bytes;
  j["fragmentation"] = r.fragmentation;
  j["allocator_ooms"] = r.allocator_ooms;
  j["first_allocator_oom_ns"] = r.first_allocator_oom_ns;
  if (!r.message.empty()) j["message"] = dtr::trace::valid_utf8(r.message);
  return nlohmann::json::parse(j.dump());
}

std::string result_csv_header() {
  std::string out;
  for (const auto& c : result_columns()) out += (out.empty() ? "" : ",") + c;
  return out;
}

std::string result_to_csv_row(const std::string& trace,
                              const sim::SimResult& r) {
  std::ostringstream o;
  o.precision(10);
  // Trace names are file stems; quote them (RFC 4180) in case they hold a
  // comma, a quote or a line break.
  std::string quoted = trace;
  if (quoted.find_first_of(",\"\r\n") != std::string::npos) {
    std::string q = "\"";
    for (char c : quoted)
      q += (c == '"') ? std::string("\"\"") : std::string(1, c);
    quoted = q + "\"";
  }
  o << quoted << ',' << r.heuristic << ',' << to_string(r.policy) << ','
    << r.budget_ratio << ',' << r.budget_bytes << ',' << r.baseline.peak_bytes
    << ',' << r.baseline.compute_ns << ',' << r.baseline.constant_bytes << ','
    << r.baseline.bottleneck_bytes << ',' << r.model_compute_ns << ','
    << r.remat_compute_ns << ',' << r.overhead << ',' << r.peak_bytes << ','
    << r.evictions << ',' << r.eager_evictions << ',' << r.banishments << ','
    << r.remats << ',' << r.metadata_accesses << ',' << to_string(r.status)
    << ',' << r.trace_ops << ',' << r.sim_wall_ns << ',' << r.chosen << ','
    << sim::to_string(r.allocator) << ',' << r.peak_bytes << ','
    << r.reserved_peak_bytes << ',' << r.fragmentation << ','
    << r.allocator_ooms << ',' << r.first_allocator_oom_ns;
  return o.str();
}

}  // namespace dtr::report
