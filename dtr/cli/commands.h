#pragma once
/// The `dtr` command line: one file per subcommand, each registering itself
/// on the CLI11 app. Errors are dtr::Error exceptions; only main() catches.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dtr::cli {

void add_sim_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_fidelity_command(CLI::App& app);
void add_gen_command(CLI::App& app);

/// "1.0,0.9,0.5" -> {1.0, 0.9, 0.5}; throws dtr::InvalidArgument naming
/// --ratios for an item that is not a positive finite number.
std::vector<double> parse_ratio_list(const std::string& text);
/// "all" or "dtr,lru" -> heuristic names; throws dtr::InvalidArgument.
std::vector<std::string> parse_heuristic_list(const std::string& text);

}  // namespace dtr::cli
