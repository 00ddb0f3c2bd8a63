#include "dtr/core/heuristic.h"

#include <cmath>
#include <limits>

#include "dtr/core/error.h"
#include "dtr/core/heuristics/evicted_regions.h"
#include "dtr/core/heuristics/simple.h"
#include "dtr/core/heuristics/union_find_neighbourhood.h"

namespace dtr {

double Heuristic::cost_density(std::int64_t compute_ns, std::int64_t bytes,
                               std::int64_t staleness) {
  if (bytes <= 0 || staleness <= 0) {
    return std::numeric_limits<double>::infinity();
  }
  // The product is exact in long double up to 2^64, so the quotient is
  // rounded (almost always) like the reference's int/int true division.
  long double denominator =
      static_cast<long double>(bytes) * static_cast<long double>(staleness);
  return static_cast<double>(static_cast<long double>(compute_ns) /
                             denominator);
}

StorageId Heuristic::choose(const ChooseContext& ctx) {
  const auto& slots = ctx.pool.slots();
  StorageId best = kNoId;
  double best_score = std::numeric_limits<double>::infinity();
  auto consider = [&](StorageId s) {
    double sc = score(ctx.graph, s, ctx.now);
    if (sc <= best_score) {
      best_score = sc;
      best = s;
    }
    return sc == 0.0;
  };
  if (!ctx.sample_sqrt && ctx.min_bytes <= 0) {
    for (StorageId s : slots) {
      if (s != kNoId && consider(s)) break;
    }
    return best;
  }
  // The prototype's optimizations: skip small storages, and step through the
  // pool by a random stride of 1..sqrt(n), which examines about 2 sqrt(n).
  std::size_t max_stride = 1;
  if (ctx.sample_sqrt) {
    max_stride = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::sqrt(double(ctx.pool.size()))));
  }
  std::uniform_int_distribution<std::size_t> stride(1, max_stride);
  for (std::size_t i = 0; i < slots.size();) {
    StorageId s = slots[i];
    if (s == kNoId) {
      ++i;
      continue;
    }
    if (ctx.graph.storage(s).bytes >= ctx.min_bytes && consider(s)) break;
    i += ctx.sample_sqrt ? stride(ctx.rng) : 1;
  }
  if (best != kNoId) return best;
  // Sampling or the size filter found nothing: fall back to a full scan so
  // that an optimization never turns into a spurious out-of-memory.
  for (StorageId s : slots) {
    if (s != kNoId && consider(s)) break;
  }
  return best;
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
  for (const auto& n : heuristic_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("[heuristic] unknown heuristic '" + std::string(name) +
                        "' (known: " + known + ")");
}

const std::vector<std::string>& heuristic_names() {
  static const std::vector<std::string> names = {
      "dtr", "dtr-eq", "dtr-local", "msps", "lru", "size", "random"};
  return names;
}

}  // namespace dtr
