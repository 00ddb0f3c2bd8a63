#pragma once
/// One naming for results everywhere: the JSON keys of `dtr sim --json`, the
/// CSV columns of `dtr sweep` and the SimResult fields are the same words.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "dtr/sim/simulator.h"

namespace dtr::report {

/// Column names, in CSV order.
const std::vector<std::string>& result_columns();
/// The result as a JSON object with `trace` plus every column.
nlohmann::json result_to_json(const std::string& trace,
                              const sim::SimResult& r);
/// One CSV row matching result_columns().
std::string result_to_csv_row(const std::string& trace,
                              const sim::SimResult& r);
std::string result_csv_header();

}  // namespace dtr::report
