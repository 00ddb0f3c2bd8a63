#pragma once
/// The `dtr` command line: one file per subcommand, each registering itself
/// on the CLI11 app. Errors are dtr::Error exceptions; only main() catches.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "dtr/core/error.h"

namespace dtr::cli {

/// Exit codes of `dtr`: 0 success; 1 bad input, or a result that could not
/// be written; 2 the work ran but did not succeed (`dtr sim`: the simulated
/// run ended `oom` or `thrash`; its result is still printed).
inline constexpr int kExitError = 1;
inline constexpr int kExitRunFailed = 2;

/// Thrown by a command after it printed a result that is a failure (see
/// kExitRunFailed); main() prints the message and exits with 2.
class RunFailed : public Error {
 public:
  using Error::Error;
};

void add_sim_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_fidelity_command(CLI::App& app);
void add_gen_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_heuristics_command(CLI::App& app);

/// "1.0,0.9,0.5" -> {1.0, 0.9, 0.5}; throws dtr::InvalidArgument naming
/// --ratios for an item that is not a positive finite number.
std::vector<double> parse_ratio_list(const std::string& text);
/// "all" or "dtr,lru" -> heuristic names; throws dtr::InvalidArgument.
std::vector<std::string> parse_heuristic_list(const std::string& text);
/// "all" or "milp,chen-sqrtn" -> planner names; throws dtr::InvalidArgument.
std::vector<std::string> parse_planner_list(const std::string& text);
/// "a,b,,c" -> {"a", "b", "", "c"}.
std::vector<std::string> split_list(const std::string& text);

}  // namespace dtr::cli
