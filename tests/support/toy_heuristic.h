#pragma once
// A heuristic defined outside dtr/core, added the way docs/heuristics.md
// says a user adds one: its class, and one registration. Tests check that
// it then appears wherever users pick heuristics.
#include <cstdint>
#include <memory>
#include <string_view>

#include "dtr/core/graph.h"
#include "dtr/core/heuristic.h"
#include "dtr/core/heuristic_registry.h"

namespace dtr::testing {

inline constexpr std::string_view kToyHeuristic = "smallest-first";

/// The smallest storage first.
class SmallestFirst final : public Heuristic {
 public:
  std::string_view name() const override { return kToyHeuristic; }
  double score(const Graph& g, StorageId s, std::int64_t) override {
    ++accesses_;
    return static_cast<double>(g.storage(s).bytes);
  }
};

/// Registers SmallestFirst, once per process.
inline void register_toy_heuristic() {
  static const bool registered = [] {
    register_heuristic(
        {std::string(kToyHeuristic), "the smallest storage first (a test's)",
         true,
         [](std::uint64_t) { return std::make_unique<SmallestFirst>(); }});
    return true;
  }();
  (void)registered;
}

}  // namespace dtr::testing
