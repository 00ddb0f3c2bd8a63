#pragma once
/// The heuristics users pick by name, in one table: what `make_heuristic`
/// builds, what the CLI lists and sweeps by default, what `auto` simulates,
/// what the Python package reports (`dtr.heuristics()`), and what
/// `dtr heuristics` prints. The seven of the paper are registered first;
/// a heuristic defined elsewhere registers itself once and appears in all of
/// them (docs/heuristics.md, "Adding a heuristic").
///
///   dtr::register_heuristic({"biggest-first", "largest storage first",
///                            /*auto_candidate=*/true,
///                            [](std::uint64_t) {
///                              return std::make_unique<BiggestFirst>();
///                            }});
///   auto h = dtr::make_heuristic("biggest-first");
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dtr/core/heuristic.h"

namespace dtr {

struct HeuristicEntry {
  std::string name;     ///< what users type: lower case, no spaces
  std::string summary;  ///< one line, for help texts and `dtr heuristics`
  /// `auto` simulates it and sweeps run it by default; false for one whose
  /// runs depend on a seed ("random"), since a choice made on one step must
  /// carry to the next.
  bool auto_candidate = true;
  /// Builds an instance; `seed` is for randomized heuristics.
  std::function<std::unique_ptr<Heuristic>(std::uint64_t seed)> make;
};

/// Every registered heuristic, in registration order. Thread-safe.
std::vector<HeuristicEntry> registered_heuristics();

/// Adds `entry`. Throws dtr::InvalidArgument if its name is empty, holds a
/// comma or white space, is "auto" or "all", or is taken, or if `make` is
/// empty. Thread-safe.
void register_heuristic(HeuristicEntry entry);

/// "dtr, dtr-eq, ..." (`auto_only`: the auto candidates), for help texts.
std::string heuristic_list(bool auto_only = false);

}  // namespace dtr
