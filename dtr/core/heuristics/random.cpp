#include "dtr/core/heuristics/random.h"

namespace dtr {

double RandomHeuristic::score(const Graph& g, StorageId s, std::int64_t now) {
  ++accesses_;
  return 0.0;
}

StorageId RandomHeuristic::choose(const ChooseContext& ctx) {
  ++accesses_;
  if (ctx.pool.empty()) return kNoId;
  // Pick the k-th live slot; the pool is compacted lazily so skip holes.
  std::uniform_int_distribution<std::size_t> pick(0, ctx.pool.size() - 1);
  std::size_t k = pick(rng_);
  for (StorageId s : ctx.pool.slots()) {
    if (s == kNoId) continue;
    if (k-- == 0) return s;
  }
  return kNoId;
}

}  // namespace dtr
