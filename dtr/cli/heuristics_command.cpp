// `dtr heuristics`: the registered heuristics (heuristic_registry.h), one
// per line, with whether auto considers them and what they do.
#include <iostream>

#include "dtr/cli/commands.h"
#include "dtr/core/heuristic_registry.h"

namespace dtr::cli {

void add_heuristics_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "heuristics",
      "List the eviction heuristics: name, whether auto and sweeps use it "
      "by default, what it evicts first");
  sub->callback([] {
    for (const HeuristicEntry& e : registered_heuristics()) {
      std::cout << e.name << "\t" << (e.auto_candidate ? "auto" : "-") << "\t"
                << e.summary << "\n";
    }
  });
}

}  // namespace dtr::cli
