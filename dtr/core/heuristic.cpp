#include "dtr/core/heuristic.h"

#include "dtr/core/error.h"
#include "dtr/core/heuristic_registry.h"

namespace dtr {

double Heuristic::cost_density_wide(std::int64_t compute_ns, std::int64_t bytes,
                                    std::int64_t staleness) {
  // The product is exact in long double up to 2^64, so the quotient is
  // rounded (almost always) like the reference's int/int true division.
  long double denominator =
      static_cast<long double>(bytes) * static_cast<long double>(staleness);
  return static_cast<double>(static_cast<long double>(compute_ns) /
                             denominator);
}

StorageId Heuristic::choose(const ChooseContext& ctx) {
  return scan_pool(ctx,
                   [&](StorageId s) { return score(ctx.graph, s, ctx.now); });
}

std::unique_ptr<Heuristic> make_heuristic(std::string_view name,
                                          std::uint64_t seed) {
  for (const HeuristicEntry& e : registered_heuristics()) {
    if (e.name == name) return e.make(seed);
  }
  throw InvalidArgument("[heuristic] unknown heuristic '" + std::string(name) +
                        "' (known: " + heuristic_list() + ")");
}

ChoiceMode parse_choice_mode(std::string_view name) {
  if (name == "index") return ChoiceMode::kIndex;
  if (name == "scan") return ChoiceMode::kScan;
  if (name == "check") return ChoiceMode::kCheck;
  if (name == "fast-scan") return ChoiceMode::kFastScan;
  if (name == "check-fast-scan") return ChoiceMode::kCheckFastScan;
  throw InvalidArgument("[heuristic] unknown choice mode '" +
                        std::string(name) +
                        "' (known: index, scan, check, fast-scan, "
                        "check-fast-scan)");
}

std::vector<std::string> heuristic_names(bool auto_only) {
  std::vector<std::string> out;
  for (const HeuristicEntry& e : registered_heuristics()) {
    if (!auto_only || e.auto_candidate) out.push_back(e.name);
  }
  return out;
}

}  // namespace dtr
