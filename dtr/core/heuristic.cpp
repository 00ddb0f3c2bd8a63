#include "dtr/core/heuristic.h"

#include "dtr/core/error.h"
#include "dtr/core/heuristics/dtr.h"
#include "dtr/core/heuristics/dtr_eq.h"
#include "dtr/core/heuristics/dtr_local.h"
#include "dtr/core/heuristics/lru.h"
#include "dtr/core/heuristics/msps.h"
#include "dtr/core/heuristics/random.h"
#include "dtr/core/heuristics/size.h"

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
  if (name == "dtr") return std::make_unique<DtrExactHeuristic>();
  if (name == "dtr-eq") return std::make_unique<DtrEqHeuristic>();
  if (name == "dtr-local") return std::make_unique<DtrLocalHeuristic>();
  if (name == "lru") return std::make_unique<LruHeuristic>();
  if (name == "size") return std::make_unique<SizeHeuristic>();
  if (name == "msps") return std::make_unique<MspsHeuristic>();
  if (name == "random") return std::make_unique<RandomHeuristic>(seed);
  std::string known;
  for (const auto& n : heuristic_names())
    known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("[heuristic] unknown heuristic '" + std::string(name) +
                        "' (known: " + known + ")");
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

const std::vector<std::string>& heuristic_names() {
  static const std::vector<std::string> names = {
      "dtr", "dtr-eq", "dtr-local", "msps", "lru", "size", "random"};
  return names;
}

}  // namespace dtr
